#include "tessera/parallel/block_copy.hpp"

#include "tessera/core/error.hpp"

namespace tessera::parallel {
namespace {

int64_t volume_of(const Index5& e) { return e[0] * e[1] * e[2] * e[3] * e[4]; }

std::string str(const Index5& i) {
  return "[" + std::to_string(i[0]) + ", " + std::to_string(i[1]) + ", " + std::to_string(i[2]) + ", " +
         std::to_string(i[3]) + ", " + std::to_string(i[4]) + "]";
}

void require_inside(const char* label, const Array5& a, const Index5& offset, const Index5& extent) {
  bool inside = static_cast<int64_t>(a.data.extent(0)) >= volume_of(a.extents);
  for (size_t k = 0; k < 5; ++k)
    inside = inside && offset[k] >= 0 && extent[k] >= 0 && offset[k] + extent[k] <= a.extents[k];
  require_shape(inside, std::string(label) + ": a sub-box of extent " + str(extent) + " at " + str(offset) +
                            " does not lie inside an array of extent " + str(a.extents) + " (" +
                            std::to_string(a.data.extent(0)) + " elements)");
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

// Kernels run over (n, d, h, w) and loop over channels innermost: channels are contiguous in
// both arrays and the position is decoded once for all of them.
void move_sub_box(const char* label, const Array5& src, const Index5& src_offset, const Array5& dst,
                  const Index5& dst_offset, const Index5& extent, bool accumulate) {
  require_inside(label, src, src_offset, extent);
  require_inside(label, dst, dst_offset, extent);
  if (volume_of(extent) == 0) return;
  const BoxIndex s = index_of(src, src_offset), d = index_of(dst, dst_offset);
  const int64_t channels = extent[4];
  const auto sv = src.data;
  const auto dv = dst.data;
  Kokkos::parallel_for(
      label, MDPolicy<4>({0, 0, 0, 0}, {extent[0], extent[1], extent[2], extent[3]}),
      KOKKOS_LAMBDA(const int64_t n, const int64_t z, const int64_t y, const int64_t x) {
        const int64_t si = s.base + n * s.stride_n + z * s.stride_d + y * s.stride_h + x * s.stride_w;
        const int64_t di = d.base + n * d.stride_n + z * d.stride_d + y * d.stride_h + x * d.stride_w;
        if (accumulate)
          for (int64_t c = 0; c < channels; ++c) dv(di + c) += sv(si + c);
        else
          for (int64_t c = 0; c < channels; ++c) dv(di + c) = sv(si + c);
      });
}

}  // namespace

Index5 extents5_of(const Shape& a) {
  if (a.rank() == 5) return {a[0], a[1], a[2], a[3], a[4]};
  if (a.rank() == 4) return {a[0], 1, a[1], a[2], a[3]};
  if (a.rank() == 2) return {a[0], 1, 1, 1, a[1]};
  throw ShapeError("activation " + a.str() + " is neither [N, C], [N, H, W, C] nor [N, D, H, W, C]");
}

Array5 Array5::of(const Tensor& activation) { return Array5{activation.view(), extents5_of(activation.shape())}; }

Array5 Array5::in_buffer(const DeviceView<float>& buffer, int64_t offset, const Index5& extents) {
  const int64_t count = volume_of(extents);
  require_shape(offset >= 0 && offset + count <= static_cast<int64_t>(buffer.extent(0)),
                "a message of " + std::to_string(count) + " elements at " + std::to_string(offset) +
                    " does not fit a buffer of " + std::to_string(buffer.extent(0)));
  return Array5{DeviceView<float>(Kokkos::subview(buffer, std::make_pair(offset, offset + count))), extents};
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
  const int64_t channels = extent[4];
  const auto dv = dst.data;
  Kokkos::parallel_for(
      label, MDPolicy<4>({0, 0, 0, 0}, {extent[0], extent[1], extent[2], extent[3]}),
      KOKKOS_LAMBDA(const int64_t n, const int64_t z, const int64_t y, const int64_t x) {
        const int64_t di = d.base + n * d.stride_n + z * d.stride_d + y * d.stride_h + x * d.stride_w;
        for (int64_t c = 0; c < channels; ++c) dv(di + c) = value;
      });
}

}  // namespace tessera::parallel
