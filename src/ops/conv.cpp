#include <string>

#include "spatial_extents.hpp"
#include "tessera/core/error.hpp"
#include "tessera/ops/conv.hpp"
#include "tessera/ops/size_limits.hpp"

namespace tessera::ops {
using detail::all_extents;
using detail::channels_last;
using detail::extents;

std::array<int64_t, 3> ConvGeometry::out_size() const {
  std::array<int64_t, 3> out{};
  for (size_t i = 0; i < 3; ++i) {
    const int64_t span = in_size[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1;
    // Integer division truncates towards zero; an impossible geometry reads as size 0.
    out[i] = span < 0 || stride[i] < 1 ? 0 : span / stride[i] + 1;
  }
  return out;
}

Shape ConvGeometry::input_shape() const { return channels_last(spatial_rank, batch, in_size, in_channels); }

Shape ConvGeometry::output_shape() const {
  const auto o = out_size();
  return channels_last(spatial_rank, batch, o, out_channels);
}

Shape ConvGeometry::weight_shape() const { return channels_last(spatial_rank, out_channels, kernel, in_channels); }

double ConvGeometry::forward_flops() const {
  const auto o = out_size();
  const double positions = static_cast<double>(batch) * static_cast<double>(o[0] * o[1] * o[2]);
  return 2.0 * static_cast<double>(kernel_volume()) * static_cast<double>(in_channels) *
         static_cast<double>(out_channels) * positions;
}

std::string ConvGeometry::str() const {
  return std::string(type == ElementType::fp32 ? "" : std::string(element_type_name(type)) + " ") +
         std::to_string(spatial_rank) + "d " + std::to_string(in_channels) + "->" + std::to_string(out_channels) +
         " k" + all_extents(kernel, spatial_rank).substr(1) + " s" + extents(stride, spatial_rank) + " p" +
         extents(padding, spatial_rank) + " d" + extents(dilation, spatial_rank) + " in " + std::to_string(batch) +
         all_extents(in_size, spatial_rank);
}

void ConvGeometry::validate(const std::string& where) const {
  const auto fail = [&](const std::string& problem) {
    throw ShapeError(where + ": convolution " + str() + ": " + problem);
  };
  if (spatial_rank != 2 && spatial_rank != 3) fail("spatial rank must be 2 or 3, got " + std::to_string(spatial_rank));
  if (batch < 1 || in_channels < 1 || out_channels < 1)
    fail("batch and channel counts must be positive (batch " + std::to_string(batch) + ", channels " +
         std::to_string(in_channels) + "->" + std::to_string(out_channels) + ")");
  // Bounds far beyond any real network keep every size, reach and weight count below computed
  // here and by the layers (taps * channels) within int64: they come from configs.
  const auto at_most = [&](const std::string& what, int64_t value, int64_t bound) {
    if (value > bound) fail(what + " must be at most " + std::to_string(bound) + ", got " + std::to_string(value));
  };
  at_most("batch", batch, kMaxSize);
  at_most("input channels", in_channels, kMaxExtent);
  at_most("output channels", out_channels, kMaxExtent);
  static const char* const axis[3] = {"depth", "height", "width"};
  for (size_t i = 0; i < 3; ++i) {
    const std::string a = axis[i];
    at_most("input " + a, in_size[i], kMaxSize);
    at_most("kernel " + a, kernel[i], kMaxExtent);
    at_most("stride " + a, stride[i], kMaxExtent);
    at_most("dilation " + a, dilation[i], kMaxExtent);
    at_most("padding " + a, padding[i], kMaxExtent);
    if (in_size[i] < 1) fail("input " + a + " must be positive, got " + std::to_string(in_size[i]));
    if (kernel[i] < 1) fail("kernel " + a + " must be positive, got " + std::to_string(kernel[i]));
    if (stride[i] < 1) fail("stride " + a + " must be positive, got " + std::to_string(stride[i]));
    if (dilation[i] < 1) fail("dilation " + a + " must be positive, got " + std::to_string(dilation[i]));
    if (padding[i] < 0) fail("padding " + a + " must not be negative, got " + std::to_string(padding[i]));
    const int64_t reach = dilation[i] * (kernel[i] - 1) + 1;
    if (reach > in_size[i] + 2 * padding[i])
      fail("the kernel spans " + std::to_string(reach) + " in " + a + " but the padded input has only " +
           std::to_string(in_size[i] + 2 * padding[i]));
  }
  int64_t weights = in_channels * out_channels;  // both at most 2^20
  for (size_t i = 0; i < 3; ++i) {
    weights *= kernel[i];  // at most 2^40 * 2^20
    if (weights > kMaxWeights) fail("the weights would hold more than " + std::to_string(kMaxWeights) + " values");
  }
  if (spatial_rank == 2 && (in_size[0] != 1 || kernel[0] != 1 || stride[0] != 1 || padding[0] != 0 || dilation[0] != 1))
    fail("a 2D convolution must have depth 1 with kernel, stride and dilation 1 and no padding in depth");
}

}  // namespace tessera::ops
