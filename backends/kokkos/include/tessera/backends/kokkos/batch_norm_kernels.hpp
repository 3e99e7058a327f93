#pragma once
// Batch-norm kernels over a channels-last activation seen as a [rows, channels] matrix,
// templated on the element type so tests can check them in double; the op runs them in float.
#include <algorithm>
#include <cstdint>
#include <string>

#include "tessera/core/kokkos_compat.hpp"
#include "tessera/core/tensor.hpp"

namespace tessera::kokkos_backend {

template <class T>
using ConstVector = Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>;
template <class T>
using Vector = Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>;

/// Partial sums of the two-level per-channel reduction: [blocks, 2·channels] in double.
using ChannelSumWorkspace = Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>;

/// Rows are cut into a fixed number of blocks that depends only on the geometry, so the
/// summation order (and hence the result) is the same for any thread count. The cap on
/// blocks·channels bounds the workspace to about 1 MiB while keeping blocks·channels large
/// enough to fill a GPU.
inline ChannelSumWorkspace make_channel_sum_workspace(int64_t rows, int64_t channels) {
  const int64_t by_rows = (rows + 15) / 16;
  const int64_t by_memory = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, channels));
  const int64_t blocks = std::max<int64_t>(1, std::min(by_rows, by_memory));
  return ChannelSumWorkspace(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::channel_sum_workspace"),
                             static_cast<size_t>(blocks), static_cast<size_t>(2 * channels));
}

/// sums[c] = Σ_r a(r, c), sums[channels + c] = Σ_r b(r, c) where `term(index, c, a, b)` adds
/// the two terms of element `index` = r·channels + c. Each (block, channel) pair sums its rows
/// in order (adjacent channels read adjacent memory), then each channel sums its blocks in order.
template <class T, class Term>
void channel_sums(const std::string& label, int64_t rows, int64_t channels, const Term& term,
                  const ChannelSumWorkspace& partial, const Vector<T>& sums) {
  const int64_t blocks = static_cast<int64_t>(partial.extent(0));
  const int64_t block_rows = (rows + blocks - 1) / blocks;
  Kokkos::parallel_for(
      label + "_blocks", MDPolicy<2>({0, 0}, {blocks, channels}), KOKKOS_LAMBDA(const int64_t b, const int64_t c) {
        const int64_t begin = b * block_rows;
        const int64_t end = math::min(rows, begin + block_rows);
        double a = 0.0, s = 0.0;
        for (int64_t r = begin; r < end; ++r) term(r * channels + c, c, a, s);
        partial(b, c) = a;
        partial(b, channels + c) = s;
      });
  Kokkos::parallel_for(
      label + "_channels", RangePolicy(0, channels), KOKKOS_LAMBDA(const int64_t c) {
        double a = 0.0, s = 0.0;
        for (int64_t b = 0; b < blocks; ++b) {
          a += partial(b, c);
          s += partial(b, channels + c);
        }
        sums(c) = static_cast<T>(a);
        sums(channels + c) = static_cast<T>(s);
      });
}

template <class T>
struct SumAndSquareTerm {
  ConstVector<T> x;
  KOKKOS_INLINE_FUNCTION void operator()(int64_t i, int64_t /*c*/, double& a, double& b) const {
    const double v = static_cast<double>(x(i));
    a += v;
    b += v * v;
  }
};

template <class T>
struct GradientTerm {
  ConstVector<T> x, dy, mean, invstd;
  KOKKOS_INLINE_FUNCTION void operator()(int64_t i, int64_t c, double& a, double& b) const {
    const double g = static_cast<double>(dy(i));
    a += g;
    b += g * static_cast<double>((x(i) - mean(c)) * invstd(c));
  }
};

/// sums[c] = Σ x, sums[channels + c] = Σ x².
template <class T>
void batch_norm_statistics(const ConstVector<T>& x, int64_t rows, int64_t channels,
                           const ChannelSumWorkspace& workspace, const Vector<T>& sums) {
  channel_sums<T>("tessera::batch_norm_statistics", rows, channels, SumAndSquareTerm<T>{x}, workspace, sums);
}

/// y = gamma·(x − mean)·invstd + beta.
template <class T>
void batch_norm_normalize(const ConstVector<T>& x, int64_t rows, int64_t channels, const ConstVector<T>& mean,
                          const ConstVector<T>& invstd, const ConstVector<T>& gamma, const ConstVector<T>& beta,
                          const Vector<T>& y) {
  Kokkos::parallel_for(
      "tessera::batch_norm_normalize", RangePolicy(0, rows * channels), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t c = i % channels;
        y(i) = gamma(c) * (x(i) - mean(c)) * invstd(c) + beta(c);
      });
}

/// sums[c] = Σ dy, sums[channels + c] = Σ dy·(x − mean)·invstd.
template <class T>
void batch_norm_backward_statistics(const ConstVector<T>& x, const ConstVector<T>& dy, int64_t rows, int64_t channels,
                                    const ConstVector<T>& mean, const ConstVector<T>& invstd,
                                    const ChannelSumWorkspace& workspace, const Vector<T>& sums) {
  channel_sums<T>("tessera::batch_norm_backward_statistics", rows, channels, GradientTerm<T>{x, dy, mean, invstd},
                  workspace, sums);
}

/// dx = gamma·invstd·(dy − Σdy/count − x̂·Σdy·x̂/count) with batch statistics, or
/// gamma·invstd·dy when mean and invstd are constants (inference statistics).
template <class T>
void batch_norm_backward_data(const ConstVector<T>& x, const ConstVector<T>& dy, int64_t rows, int64_t channels,
                              const ConstVector<T>& mean, const ConstVector<T>& invstd, const ConstVector<T>& gamma,
                              const ConstVector<T>& sums, double count, bool batch_stats, const Vector<T>& dx) {
  if (!batch_stats) {
    Kokkos::parallel_for(
        "tessera::batch_norm_backward_data_fixed", RangePolicy(0, rows * channels), KOKKOS_LAMBDA(const int64_t i) {
          const int64_t c = i % channels;
          dx(i) = gamma(c) * invstd(c) * dy(i);
        });
    return;
  }
  const T inv_count = static_cast<T>(1.0 / count);
  Kokkos::parallel_for(
      "tessera::batch_norm_backward_data", RangePolicy(0, rows * channels), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t c = i % channels;
        const T xhat = (x(i) - mean(c)) * invstd(c);
        dx(i) = gamma(c) * invstd(c) * (dy(i) - sums(c) * inv_count - xhat * sums(channels + c) * inv_count);
      });
}

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
