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

/// The 4-byte words that `count` values of `type` take in a message buffer: count for fp32,
/// count/2 rounded up for the 16-bit types (two values a word). Message buffers are word
/// arrays so that one buffer, one MPI datatype and one post-time stamp serve every type.
int64_t words_for(int64_t count, ElementType type);

/// A row-major [N, D, H, W, C] array in the default memory space: an activation, or a message
/// buffer holding one sub-box (its extents are then the sub-box's extents), of one element
/// type: floats in `data` (fp32) or 16-bit patterns in `half` (bf16, fp16). Halo exchange,
/// channel exchange and redistribution move data between such arrays one sub-box at a time.
struct Array5 {
  DeviceView<float> data;
  Index5 extents{1, 1, 1, 1, 1};
  DeviceView<uint16_t> half;
  ElementType type = ElementType::fp32;

  /// A rank-2, rank-4 or rank-5 activation tensor as [N, D, H, W, C], in its type.
  static Array5 of(const Tensor& activation);
  /// The values of a dense array of the given extents and `type`, stored from word `offset` of
  /// a word buffer on (words_for(count, type) words).
  static Array5 in_buffer(const DeviceView<float>& buffer, int64_t offset, const Index5& extents,
                          ElementType type = ElementType::fp32);
  /// Elements in the array's storage.
  int64_t storage_size() const;
};

/// dst[dst_offset + i] = src[src_offset + i] for every index i below `extent` (a Kokkos kernel
/// named `label`), converting when the types differ (rounding to nearest even into a 16-bit
/// type, exactly out of one). Throws ShapeError when a box does not lie inside its array.
void copy_sub_box(const char* label, const Array5& src, const Index5& src_offset, const Array5& dst,
                  const Index5& dst_offset, const Index5& extent);
/// dst[dst_offset + i] += src[src_offset + i]: accumulates a sub-box, adding in fp32 and
/// rounding the sum once into dst's type. One kernel writes each element once, so calling it
/// for overlapping boxes in a fixed order sums deterministically.
void add_sub_box(const char* label, const Array5& src, const Index5& src_offset, const Array5& dst,
                 const Index5& dst_offset, const Index5& extent);
/// dst[offset + i] = value for every index i below `extent`. In a 16-bit array a finite
/// `value` beyond the type's range becomes its largest finite value of that sign (so the
/// lowest float, max pooling's boundary, stays finite), not infinity.
void fill_sub_box(const char* label, const Array5& dst, const Index5& offset, const Index5& extent, float value);

}  // namespace tessera::parallel
