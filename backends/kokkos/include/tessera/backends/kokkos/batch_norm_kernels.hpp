#pragma once
// Batch-norm kernels over a channels-last activation seen as a [rows, channels] matrix,
// templated on the element type T of the statistics and parameters, so tests can check them
// in double (the op runs them in float), and A of the activations x, y, dy, dx: T itself, or
// uint16_t for bf16 activations (bit patterns) with fp32 statistics and arithmetic.
//
// Each pass is one sweep over memory. On the host a work item takes a block of whole rows and
// runs along them, channel after channel, in contiguous memory (a loop the compiler
// vectorises); on a GPU adjacent threads take adjacent elements. The normalisation may carry
// an activation as its epilogue (BatchNormEpilogue: batch norm and the activation after it in
// one pass forward, and the activation's derivative folded into the two backward passes).
#include <cstdint>

#include <type_traits>

#include "tessera/core/kokkos_compat.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/ops/batch_norm.hpp"

namespace tessera::kokkos_backend {

template <class T>
using ConstVector = Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>;
template <class T>
using Vector = Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>;

/// The activations' views. A is named or defaults to T, never deduced (a nested type is a
/// non-deduced context), so that a View converting to ConstVector<T> still finds the kernels.
template <class A>
using ActivationsIn = ConstVector<typename std::enable_if<true, A>::type>;
template <class A>
using ActivationsOut = Vector<typename std::enable_if<true, A>::type>;

/// Partial sums of the two-level per-channel reduction: [blocks, 2·channels] in double.
using ChannelSumWorkspace = Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>;

/// Rows are cut into a fixed number of blocks that depends only on the geometry, so the
/// summation order (and hence the result) is the same for any thread count. The cap on
/// blocks·channels bounds the workspace to about 1 MiB while keeping blocks·channels large
/// enough to fill a GPU.
ChannelSumWorkspace make_channel_sum_workspace(int64_t rows, int64_t channels);

/// What the passes over the activations read per channel: x̂ = (x − mean)·invstd, and the
/// normalised output z = x·scale + shift (scale = γ·invstd, shift = β − mean·scale, from
/// batch_norm_scale_shift), to which the epilogue's activation f is applied.
template <class T>
struct BatchNormChannels {
  ConstVector<T> mean, invstd, scale, shift;
};

/// scale = γ·invstd, shift = β − mean·scale.
template <class T>
void batch_norm_scale_shift(const ConstVector<T>& mean, const ConstVector<T>& invstd, const ConstVector<T>& gamma,
                            const ConstVector<T>& beta, const Vector<T>& scale, const Vector<T>& shift);

/// sums[c] = Σ x, sums[channels + c] = Σ x². On the host each block of rows sums in T its
/// deviations from its first row, moved back in double, and blocks are added in double, so the
/// fp32 block sums cost no accuracy against double ones. The sums leave as T (fp32 in the op,
/// summed so across ranks): where |mean| ≫ std, E[x²] − mean² loses digits there, as before.
template <class T, class A = T>
void batch_norm_statistics(const ActivationsIn<A>& x, int64_t rows, int64_t channels,
                           const ChannelSumWorkspace& workspace, const Vector<T>& sums);

/// y = f(x·scale + shift), f the epilogue's activation (the identity when it has none).
template <class T, class A = T>
void batch_norm_forward(const ActivationsIn<A>& x, int64_t rows, int64_t channels, const BatchNormChannels<T>& ch,
                        const ops::BatchNormEpilogue& epilogue, const ActivationsOut<A>& y);

/// With g = dy·f'(x·scale + shift) (g = dy without an epilogue): sums[c] = Σ g,
/// sums[channels + c] = Σ g·x̂.
template <class T, class A = T>
void batch_norm_backward_statistics(const ActivationsIn<A>& x, const ActivationsIn<A>& dy, int64_t rows, int64_t channels,
                                    const BatchNormChannels<T>& ch, const ops::BatchNormEpilogue& epilogue,
                                    const ChannelSumWorkspace& workspace, const Vector<T>& sums);

/// dx = scale·(g − Σg/count − x̂·Σg·x̂/count) with batch statistics, or scale·g when mean and
/// invstd are constants (inference statistics); g as above.
template <class T, class A = T>
void batch_norm_backward_data(const ActivationsIn<A>& x, const ActivationsIn<A>& dy, int64_t rows, int64_t channels,
                              const BatchNormChannels<T>& ch, const ops::BatchNormEpilogue& epilogue,
                              const ConstVector<T>& sums, double count, bool batch_stats, const ActivationsOut<A>& dx);

/// From the per-channel sums [Σx, Σx²] over `count` rows (those of the whole statistics group,
/// after the allreduce): mean and invstd of the batch, and the PyTorch update of the running
/// statistics (with the unbiased batch variance). One work item per channel; all in double,
/// since E[x²] − mean² cancels. Float tensors of `channels` (sums: 2·channels) elements.
void batch_norm_batch_statistics(const Tensor& sums, double count, double momentum, double epsilon, const Tensor& mean,
                                 const Tensor& invstd, const Tensor& running_mean, const Tensor& running_var);

/// mean and invstd from the running statistics, for inference.
void batch_norm_running_statistics(const Tensor& running_mean, const Tensor& running_var, double epsilon,
                                   const Tensor& mean, const Tensor& invstd);

}  // namespace tessera::kokkos_backend
