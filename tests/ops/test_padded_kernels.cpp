// The kernels the cuDNN backend runs beside cuDNN, checked here on the host: max pooling's
// gradient as a gather from x and y (against the Kokkos pooling op, which records each
// window's argmax), in fp32 and in 16 bits; and a convolution over zero-padded input channels
// (against the same convolution unpadded).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/backend_comparison.hpp"
#include "support/conv_geometry.hpp"
#include "support/precision_bounds.hpp"
#include "tessera/backends/kokkos/channel_padding_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/backends/kokkos/max_pool_gather_kernels.hpp"
#include "tessera/backends/kokkos/padded_channels_conv.hpp"

using namespace tessera;

namespace {

ops::PoolGeometry max_pool(int rank, std::array<int64_t, 3> in, std::array<int64_t, 3> k, std::array<int64_t, 3> s,
                           std::array<int64_t, 3> p) {
  return testing::pool_geometry(ops::PoolKind::max, rank, 2, 5, in, k, s, p);
}

/// The gather's gradient against the Kokkos op's, both from the same x (values `type` holds).
void compare_gather(const ops::PoolGeometry& g32, ElementType type, uint32_t seed) {
  INFO(element_type_name(type) << " " << g32.str());
  auto op = kokkos_backend::make_pool(g32);
  const Tensor x = testing::half_values(g32.input_shape(), seed, ElementType::bf16, ElementType::fp32);
  const Tensor dy = testing::half_values(g32.output_shape(), seed + 1, ElementType::bf16, ElementType::fp32);
  Tensor y(g32.output_shape()), dx(g32.input_shape());
  op->forward(x, y);
  op->backward(x, dy, dx);
  ops::PoolGeometry g = g32;
  g.type = type;
  Tensor xt(g.input_shape(), type), yt(g.output_shape(), type), dyt(g.output_shape(), type),
      dxt(g.input_shape(), type);
  deep_copy(dxt, testing::poisoned(g.input_shape()));  // an element the kernel does not write shows
  deep_copy(xt, x);
  deep_copy(yt, y);
  deep_copy(dyt, dy);
  kokkos_backend::max_pool_backward_gather(g, xt, yt, dyt, dxt);
  // Overlapping windows sum their gradients in another order than the op: one rounding of the
  // 16-bit type, or fp32's.
  const double u = type == ElementType::fp32 ? 0x1p-22 : unit_roundoff(type);
  testing::check_within("gradient", dxt, dx, testing::absolute(dx), u, 0.0, 1e-30);
}

}  // namespace

TEST_CASE("max pooling's gradient gathered from x and y equals the argmax op's, in fp32, bf16 and fp16",
          "[pool][kernels][precision]") {
  for (const ElementType type : {ElementType::fp32, ElementType::bf16, ElementType::fp16}) {
    compare_gather(max_pool(3, {6, 8, 8}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}), type, 1);
    compare_gather(max_pool(3, {5, 7, 6}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}), type, 11);  // overlapping, padded
    compare_gather(max_pool(2, {1, 9, 7}, {1, 3, 2}, {1, 1, 2}, {0, 1, 0}), type, 21);
  }
}

TEST_CASE("max pooling's gathered gradient goes to the first of equal maxima", "[pool][kernels]") {
  const ops::PoolGeometry g = max_pool(2, {1, 2, 4}, {1, 2, 2}, {1, 2, 2}, {0, 0, 0});
  Tensor x(g.input_shape()), y(g.output_shape()), dy(g.output_shape()), dx(g.input_shape());
  x.fill(1.0f);
  y.fill(1.0f);
  dy.fill(3.0f);
  kokkos_backend::max_pool_backward_gather(g, x, y, dy, dx);
  const std::vector<float> got = dx.to_host();
  // Per sample and channel (5 channels innermost): windows at w = 0 and w = 2 of row 0.
  for (size_t i = 0; i < got.size(); ++i) {
    const size_t position = i / 5 % 8;  // h·4 + w within a sample
    CHECK(got[i] == (position == 0 || position == 2 ? 3.0f : 0.0f));
  }
}

TEST_CASE("a convolution over zero-padded input channels equals the unpadded one, every pass", "[conv][kernels]") {
  for (const int64_t channels : {1, 3, 4}) {
    const ops::ConvGeometry g = testing::conv3d(2, channels, 6, {5, 6, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
    ops::ConvGeometry padded = g;
    padded.in_channels = kokkos_backend::padded_channels(channels);
    REQUIRE(padded.in_channels == 8);
    kokkos_backend::PaddedChannelsConv op(g, padded, kokkos_backend::make_conv(padded));
    testing::ErrorLog log("padded", 1e-5);
    const auto plain = kokkos_backend::make_conv(g);
    testing::compare_conv_ops(op, *plain, g, log, 31);
  }
  ops::ConvGeometry g = testing::conv3d(1, 4, 4, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  ops::ConvGeometry other = g;
  other.kernel = {1, 1, 1};
  CHECK_THROWS_WITH(kokkos_backend::PaddedChannelsConv(g, other, kokkos_backend::make_conv(other)),
                    Catch::Contains("is not"));
}
