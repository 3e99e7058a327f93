#pragma once
// Reference convolution over channels-last activations as im2col + gemm (Kokkos Kernels, so
// OpenBLAS on the host and cuBLAS on CUDA). Templated on the element type so tests can check
// every gradient in double; the ConvOp runs them in float.
//
// With P output positions (n, od, oh, ow) and K = kD·kH·kW taps, the column matrix is
// col[P, K·Ci] (columns ordered kd, kh, kw, ci) and the ODHWI weights are a [Co, K·Ci] matrix:
//   y = col · Wᵀ (+ bias),  dW = dyᵀ · col,  dbias = Σ_P dy,  dcol = dy · W → dx by col2im.
// P is processed in chunks so that col never exceeds the workspace budget.
#include <cstddef>
#include <cstdint>

#include "tessera/core/kokkos_compat.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/ops/conv.hpp"

namespace tessera::kokkos_backend {

/// Grow-only scratch memory of one convolution (the column matrix of a chunk of output
/// positions, and the partial sums of the bias gradient). An op owns one, so steady-state
/// calls allocate nothing.
template <class T>
class ConvWorkspace {
 public:
  static constexpr size_t default_budget_bytes = size_t{32} << 20;

  /// `budget_bytes` bounds the column matrix; tests pass a tiny budget to force many chunks.
  explicit ConvWorkspace(size_t budget_bytes = default_budget_bytes) : budget_bytes_(budget_bytes) {}

  /// Output positions per chunk: as many as fit the budget, at least one, at most all.
  int64_t chunk_rows(const ops::ConvGeometry& g) const;
  /// At least n elements of column memory (contents undefined).
  DeviceView<T> columns(size_t n);
  /// At least n doubles for partial sums (contents undefined).
  DeviceView<double> partials(size_t n);

 private:
  size_t budget_bytes_;
  DeviceView<T> columns_;
  DeviceView<double> partials_;
};

/// y = conv(x, w) + bias. `bias` may be an empty View. x, w and y hold exactly the elements of
/// g.input_shape(), g.weight_shape() and g.output_shape().
template <class T>
void conv_forward(const ops::ConvGeometry& g, const DeviceView<const T>& x, const DeviceView<const T>& w,
                  const DeviceView<const T>& bias, const DeviceView<T>& y, ConvWorkspace<T>& workspace);

/// dx = ∂(Σ y·dy)/∂x: dcol = dy · W, then a gather per input element over the column entries
/// that read it (no atomics, so the result does not depend on the thread count). Overwrites dx.
template <class T>
void conv_backward_data(const ops::ConvGeometry& g, const DeviceView<const T>& dy, const DeviceView<const T>& w,
                        const DeviceView<T>& dx, ConvWorkspace<T>& workspace);

/// dw = dyᵀ · col and, unless `dbias` is an empty View, dbias = Σ over positions of dy.
/// Overwrites both.
template <class T>
void conv_backward_weights(const ops::ConvGeometry& g, const DeviceView<const T>& x, const DeviceView<const T>& dy,
                           const DeviceView<T>& dw, const DeviceView<T>& dbias, ConvWorkspace<T>& workspace);

/// sums[c] = Σ_r m[r, c] of a row-major [rows, channels] matrix, accumulated in double over
/// fixed blocks of rows (so the order of additions does not depend on the thread count).
template <class T>
void sum_over_rows(const DeviceView<const T>& m, int64_t rows, int64_t channels, const DeviceView<T>& sums,
                   ConvWorkspace<T>& workspace);

/// y[p, c] += bias[c] over a row-major [positions, channels] matrix. The forward pass sets y to
/// the bias before its gemms accumulate; this adds it afterwards, for callers whose y is
/// written by something that overwrites (the transposed convolution's adjoint).
template <class T>
void add_bias(const DeviceView<const T>& bias, int64_t positions, int64_t channels, const DeviceView<T>& y);

/// add_bias over a channels-last tensor (fp32, or 16-bit with the sum rounded once) and an
/// fp32 bias: y[p, c] += bias[c] with c < bias.numel().
void add_channel_bias(const Tensor& bias, const Tensor& y);

/// sum_over_rows over a channels-last tensor (fp32, or 16-bit widened) into an fp32 dbias:
/// dbias[c] = Σ_p dy[p, c] with c < dbias.numel(), so for fp32 it is bit for bit the bias
/// gradient of conv_backward_weights.
void sum_channels(const Tensor& dy, const Tensor& dbias, ConvWorkspace<float>& workspace);

}  // namespace tessera::kokkos_backend
