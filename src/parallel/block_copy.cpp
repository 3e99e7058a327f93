#include "tessera/parallel/block_copy.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/half_float.hpp"

namespace tessera::parallel {
namespace {

int64_t volume_of(const Index5& e) { return e[0] * e[1] * e[2] * e[3] * e[4]; }

std::string str(const Index5& i) {
  return "[" + std::to_string(i[0]) + ", " + std::to_string(i[1]) + ", " + std::to_string(i[2]) + ", " +
         std::to_string(i[3]) + ", " + std::to_string(i[4]) + "]";
}

void require_inside(const char* label, const Array5& a, const Index5& offset, const Index5& extent) {
  bool inside = a.storage_size() >= volume_of(a.extents);
  for (size_t k = 0; k < 5; ++k)
    inside = inside && offset[k] >= 0 && extent[k] >= 0 && offset[k] + extent[k] <= a.extents[k];
  require_shape(inside, std::string(label) + ": a sub-box of extent " + str(extent) + " at " + str(offset) +
                            " does not lie inside an array of extent " + str(a.extents) + " (" +
                            std::to_string(a.storage_size()) + " elements)");
}

/// Where a sub-box starts in a row-major array and the array's strides, as plain integers
/// that device lambdas capture by value.
struct BoxIndex {
  int64_t base, stride_n, stride_d, stride_h, stride_w;
};

BoxIndex index_of(const Array5& a, const Index5& offset) {
  const Index5& e = a.extents;
  BoxIndex b{};
  b.stride_w = e[4];
  b.stride_h = b.stride_w * e[3];
  b.stride_d = b.stride_h * e[2];
  b.stride_n = b.stride_d * e[1];
  b.base =
      offset[0] * b.stride_n + offset[1] * b.stride_d + offset[2] * b.stride_h + offset[3] * b.stride_w + offset[4];
  return b;
}

/// Reads and writes an fp32 array's elements as floats.
struct FloatElements {
  DeviceView<float> v;
  KOKKOS_INLINE_FUNCTION float load(int64_t i) const { return v(i); }
  KOKKOS_INLINE_FUNCTION void store(int64_t i, float f) const { v(i) = f; }
};

/// Reads and writes a 16-bit array's elements as floats, rounding on store.
struct HalfElements {
  DeviceView<uint16_t> v;
  ElementType type;
  KOKKOS_INLINE_FUNCTION float load(int64_t i) const { return half_float::from_half(v(i), type); }
  KOKKOS_INLINE_FUNCTION void store(int64_t i, float f) const { v(i) = half_float::to_half(f, type); }
};

/// Moves 16-bit patterns unchanged: a copy between arrays of the same 16-bit type.
struct RawHalfElements {
  DeviceView<uint16_t> v;
  KOKKOS_INLINE_FUNCTION uint16_t load(int64_t i) const { return v(i); }
  KOKKOS_INLINE_FUNCTION void store(int64_t i, uint16_t h) const { v(i) = h; }
};

// Kernels run over (n, d, h, w) and loop over channels innermost: channels are contiguous in
// both arrays and the position is decoded once for all of them.
template <class Src, class Dst, bool Accumulate>
struct MoveBox {
  Src src;
  Dst dst;
  BoxIndex s, d;
  int64_t channels;
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t n, const int64_t z, const int64_t y, const int64_t x) const {
    const int64_t si = s.base + n * s.stride_n + z * s.stride_d + y * s.stride_h + x * s.stride_w;
    const int64_t di = d.base + n * d.stride_n + z * d.stride_d + y * d.stride_h + x * d.stride_w;
    for (int64_t c = 0; c < channels; ++c) {
      if constexpr (Accumulate)
        dst.store(di + c, dst.load(di + c) + src.load(si + c));
      else
        dst.store(di + c, src.load(si + c));
    }
  }
};

template <class Dst>
struct FillBox {
  Dst dst;
  BoxIndex d;
  int64_t channels;
  float value;
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t n, const int64_t z, const int64_t y, const int64_t x) const {
    const int64_t di = d.base + n * d.stride_n + z * d.stride_d + y * d.stride_h + x * d.stride_w;
    for (int64_t c = 0; c < channels; ++c) dst.store(di + c, value);
  }
};

MDPolicy<4> box_policy(const Index5& extent) { return MDPolicy<4>({0, 0, 0, 0}, {extent[0], extent[1], extent[2], extent[3]}); }

template <bool Accumulate, class Src>
void move_from(const char* label, const Src& src, const Array5& dst, const BoxIndex& s, const BoxIndex& d,
               const Index5& extent) {
  if (dst.type == ElementType::fp32)
    Kokkos::parallel_for(label, box_policy(extent),
                         MoveBox<Src, FloatElements, Accumulate>{src, FloatElements{dst.data}, s, d, extent[4]});
  else
    Kokkos::parallel_for(label, box_policy(extent),
                         MoveBox<Src, HalfElements, Accumulate>{src, HalfElements{dst.half, dst.type}, s, d, extent[4]});
}

void move_sub_box(const char* label, const Array5& src, const Index5& src_offset, const Array5& dst,
                  const Index5& dst_offset, const Index5& extent, bool accumulate) {
  require_inside(label, src, src_offset, extent);
  require_inside(label, dst, dst_offset, extent);
  if (volume_of(extent) == 0) return;
  const BoxIndex s = index_of(src, src_offset), d = index_of(dst, dst_offset);
  if (!accumulate && src.type != ElementType::fp32 && src.type == dst.type) {
    Kokkos::parallel_for(label, box_policy(extent),
                         MoveBox<RawHalfElements, RawHalfElements, false>{RawHalfElements{src.half},
                                                                           RawHalfElements{dst.half}, s, d, extent[4]});
    return;
  }
  if (src.type == ElementType::fp32) {
    if (accumulate) move_from<true>(label, FloatElements{src.data}, dst, s, d, extent);
    else move_from<false>(label, FloatElements{src.data}, dst, s, d, extent);
  } else {
    const HalfElements h{src.half, src.type};
    if (accumulate) move_from<true>(label, h, dst, s, d, extent);
    else move_from<false>(label, h, dst, s, d, extent);
  }
}

/// `value` as dst's type will store it: a finite value beyond a 16-bit type's range is clamped
/// to its largest finite value (what max pooling's boundary needs: below every activation).
float storable(float value, ElementType type) {
  if (type == ElementType::fp32 || !std::isfinite(value)) return value;
  const float largest = type == ElementType::bf16 ? half_float::from_bf16(0x7f7fu) : 65504.0f;
  return std::clamp(value, -largest, largest);
}

}  // namespace

Index5 extents5_of(const Shape& a) {
  if (a.rank() == 5) return {a[0], a[1], a[2], a[3], a[4]};
  if (a.rank() == 4) return {a[0], 1, a[1], a[2], a[3]};
  if (a.rank() == 2) return {a[0], 1, 1, 1, a[1]};
  throw ShapeError("activation " + a.str() + " is neither [N, C], [N, H, W, C] nor [N, D, H, W, C]");
}

int64_t words_for(int64_t count, ElementType type) { return type == ElementType::fp32 ? count : (count + 1) / 2; }

Array5 Array5::of(const Tensor& activation) {
  Array5 a;
  a.extents = extents5_of(activation.shape());
  a.type = activation.type();
  if (a.type == ElementType::fp32)
    a.data = activation.view();
  else
    a.half = activation.half_view();
  return a;
}

Array5 Array5::in_buffer(const DeviceView<float>& buffer, int64_t offset, const Index5& extents, ElementType type) {
  const int64_t count = volume_of(extents), words = words_for(count, type);
  require_shape(offset >= 0 && offset + words <= static_cast<int64_t>(buffer.extent(0)),
                "a message of " + std::to_string(count) + " " + element_type_name(type) + " values at word " +
                    std::to_string(offset) + " does not fit a buffer of " + std::to_string(buffer.extent(0)) +
                    " words");
  Array5 a;
  a.extents = extents;
  a.type = type;
  if (type == ElementType::fp32)
    a.data = DeviceView<float>(Kokkos::subview(buffer, std::make_pair(offset, offset + count)));
  else  // the words' bytes as 16-bit values: an unmanaged view, kept alive by the buffer's owner
    a.half = DeviceView<uint16_t>(reinterpret_cast<uint16_t*>(buffer.data() + offset), static_cast<size_t>(count));
  return a;
}

int64_t Array5::storage_size() const {
  return static_cast<int64_t>(type == ElementType::fp32 ? data.extent(0) : half.extent(0));
}

void copy_sub_box(const char* label, const Array5& src, const Index5& src_offset, const Array5& dst,
                  const Index5& dst_offset, const Index5& extent) {
  move_sub_box(label, src, src_offset, dst, dst_offset, extent, false);
}

void add_sub_box(const char* label, const Array5& src, const Index5& src_offset, const Array5& dst,
                 const Index5& dst_offset, const Index5& extent) {
  move_sub_box(label, src, src_offset, dst, dst_offset, extent, true);
}

void fill_sub_box(const char* label, const Array5& dst, const Index5& offset, const Index5& extent, float value) {
  require_inside(label, dst, offset, extent);
  if (volume_of(extent) == 0) return;
  const BoxIndex d = index_of(dst, offset);
  value = storable(value, dst.type);
  if (dst.type == ElementType::fp32)
    Kokkos::parallel_for(label, box_policy(extent), FillBox<FloatElements>{FloatElements{dst.data}, d, extent[4], value});
  else
    Kokkos::parallel_for(label, box_policy(extent),
                         FillBox<HalfElements>{HalfElements{dst.half, dst.type}, d, extent[4], value});
}

}  // namespace tessera::parallel
