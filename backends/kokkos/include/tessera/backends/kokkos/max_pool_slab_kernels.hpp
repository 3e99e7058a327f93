#pragma once
// The pooling half of the fused convolution + max pooling (layers::ConvMaxPool): max pooling
// with kernel = stride and no padding over one slab of convolution output, its gradient, and
// the sum of the slabs' gradients. The slab is a few depth rows of one sample, channels last
// ([rows, H, W, C]); the pooled output is the layer's whole [N, D', H', W', C] tensor, which
// the slab writes from MaxPoolSlabLayout::out_offset on.
#include <cstdint>

#include "tessera/core/kokkos_compat.hpp"
#include "tessera/core/tensor.hpp"

namespace tessera::kokkos_backend {

/// Per pooled element, the window position (kd·kH + kh)·kW + kw of its maximum: one byte,
/// since a fusable window has at most 255 positions.
using SlabArgmax = Kokkos::View<uint8_t*, Kokkos::LayoutRight, MemSpace>;

/// Where one slab sits: its conv-output extent and the pooled rows it produces.
struct MaxPoolSlabLayout {
  int64_t rows, h, w, c;        // the slab of convolution output
  int64_t kd, kh, kw;           // pool window (= stride)
  int64_t pooled_rows, ph, pw;  // pooled extent of the slab (ph, pw: of the whole layer)
  int64_t out_offset;           // first pooled element of the slab in the layer output
};

/// Max-pools a slab into y and records each maximum's window position in argmax (first of
/// equals, like the unfused pooling ops). One work item per pooled row line: index arithmetic
/// (integer divisions) stays out of the inner loops. slab and y are both fp32 or of one 16-bit type.
void max_pool_slab_forward(const Tensor& slab, const Tensor& y, const SlabArgmax& argmax, const MaxPoolSlabLayout& s);

/// The gradient of a slab of convolution output: each pooled gradient in dy goes to its
/// window's maximum, everything else (including rows and columns no window covers) is zero.
/// Overwrites grad. One work item per row line of the slab. dy and grad are both fp32 or of one
/// 16-bit type.
void max_pool_slab_backward(const Tensor& dy, const SlabArgmax& argmax, const Tensor& grad, const MaxPoolSlabLayout& s);

/// sum += part, element by element (in fp32, rounded to sum's type): the slabs' gradients
/// (their overlapping input rows, the weight and bias gradients) are computed one slab at a
/// time and added up.
void add_slab_gradient(const Tensor& sum, const Tensor& part);

}  // namespace tessera::kokkos_backend
