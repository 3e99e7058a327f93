#include <string>

#include "spatial_extents.hpp"
#include "tessera/core/error.hpp"
#include "tessera/ops/pool.hpp"
#include "tessera/ops/size_limits.hpp"

namespace tessera::ops {
using detail::all_extents;
using detail::channels_last;
using detail::extents;

std::array<int64_t, 3> PoolGeometry::out_size() const {
  std::array<int64_t, 3> out{};
  for (size_t i = 0; i < 3; ++i) {
    const int64_t span = in_size[i] + 2 * padding[i] - kernel[i];
    out[i] = span < 0 || stride[i] < 1 ? 0 : span / stride[i] + 1;
  }
  return out;
}

Shape PoolGeometry::input_shape() const { return channels_last(spatial_rank, batch, in_size, channels); }

Shape PoolGeometry::output_shape() const {
  const auto o = out_size();
  return channels_last(spatial_rank, batch, o, channels);
}

std::string PoolGeometry::str() const {
  return std::string(type == ElementType::fp32 ? "" : std::string(element_type_name(type)) + " ") +
         std::to_string(spatial_rank) + "d " + (kind == PoolKind::max ? "max" : "avg") + " " +
         std::to_string(channels) + "ch k" + all_extents(kernel, spatial_rank).substr(1) + " s" +
         extents(stride, spatial_rank) + " p" + extents(padding, spatial_rank) + " in " + std::to_string(batch) +
         all_extents(in_size, spatial_rank);
}

void PoolGeometry::validate(const std::string& where) const {
  const auto fail = [&](const std::string& problem) {
    throw ShapeError(where + ": pooling " + str() + ": " + problem);
  };
  if (spatial_rank != 2 && spatial_rank != 3) fail("spatial rank must be 2 or 3, got " + std::to_string(spatial_rank));
  if (batch < 1 || channels < 1)
    fail("batch and channel counts must be positive (batch " + std::to_string(batch) + ", channels " +
         std::to_string(channels) + ")");
  // Bounds far beyond any real network (those of ConvGeometry::validate) keep the sizes
  // computed from these within int64: they come from configs.
  const auto at_most = [&](const std::string& what, int64_t value, int64_t bound) {
    if (value > bound) fail(what + " must be at most " + std::to_string(bound) + ", got " + std::to_string(value));
  };
  at_most("batch", batch, kMaxSize);
  at_most("channels", channels, kMaxSize);
  static const char* const axis[3] = {"depth", "height", "width"};
  for (size_t i = 0; i < 3; ++i) {
    const std::string a = axis[i];
    at_most("input " + a, in_size[i], kMaxSize);
    at_most("kernel " + a, kernel[i], kMaxExtent);
    at_most("stride " + a, stride[i], kMaxExtent);
    at_most("padding " + a, padding[i], kMaxExtent);
    if (in_size[i] < 1) fail("input " + a + " must be positive, got " + std::to_string(in_size[i]));
    if (kernel[i] < 1) fail("kernel " + a + " must be positive, got " + std::to_string(kernel[i]));
    if (stride[i] < 1) fail("stride " + a + " must be positive, got " + std::to_string(stride[i]));
    // Padding smaller than the kernel guarantees that every window overlaps the input, so a
    // max always exists and an average never divides by zero.
    if (padding[i] < 0 || padding[i] >= kernel[i])
      fail("padding " + a + " must be in [0, kernel), got " + std::to_string(padding[i]));
    if (kernel[i] > in_size[i] + 2 * padding[i])
      fail("the kernel spans " + std::to_string(kernel[i]) + " in " + a + " but the padded input has only " +
           std::to_string(in_size[i] + 2 * padding[i]));
  }
  if (spatial_rank == 2 && (in_size[0] != 1 || kernel[0] != 1 || stride[0] != 1 || padding[0] != 0))
    fail("a 2D pooling must have depth 1 with kernel and stride 1 and no padding in depth");
}

}  // namespace tessera::ops
