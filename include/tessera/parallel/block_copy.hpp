#pragma once
#include <array>
#include <cstdint>

#include "tessera/core/tensor.hpp"

namespace tessera::parallel {

/// An index or extent of an activation viewed as [N, D, H, W, C] (a 2D activation has D = 1).
using Index5 = std::array<int64_t, 5>;

/// The [N, D, H, W, C] extents of a channels-last activation of rank 4 ([N, H, W, C]) or 5, or
/// of features [N, C] (D = H = W = 1).
Index5 extents5_of(const Shape& activation);

/// A row-major [N, D, H, W, C] array in the default memory space: an activation, or a message
/// buffer holding one sub-box (its extents are then the sub-box's extents). Halo exchange and
/// redistribution move data between such arrays one sub-box at a time.
struct Array5 {
  DeviceView<float> data;
  Index5 extents{1, 1, 1, 1, 1};

  /// A rank-2, rank-4 or rank-5 activation tensor as [N, D, H, W, C].
  static Array5 of(const Tensor& activation);
  /// `count` elements of `buffer` from `offset` on, as a dense array of the given extents.
  static Array5 in_buffer(const DeviceView<float>& buffer, int64_t offset, const Index5& extents);
};

/// dst[dst_offset + i] = src[src_offset + i] for every index i below `extent` (a Kokkos kernel
/// named `label`). Throws ShapeError when a box does not lie inside its array.
void copy_sub_box(const char* label, const Array5& src, const Index5& src_offset, const Array5& dst,
                  const Index5& dst_offset, const Index5& extent);
/// dst[dst_offset + i] += src[src_offset + i]: accumulates a sub-box. One kernel writes each
/// element once, so calling it for overlapping boxes in a fixed order sums deterministically.
void add_sub_box(const char* label, const Array5& src, const Index5& src_offset, const Array5& dst,
                 const Index5& dst_offset, const Index5& extent);
/// dst[offset + i] = value for every index i below `extent`.
void fill_sub_box(const char* label, const Array5& dst, const Index5& offset, const Index5& extent, float value);

}  // namespace tessera::parallel
