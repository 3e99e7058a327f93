// The convolution kernels' per-channel bias add and bias-gradient sum on float tensors (what
// the transposed convolution calls): against double loops written here, and the sum bit for
// bit against the bias gradient of conv_backward_weights.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "support/conv_geometry.hpp"
#include "support/gradient_check.hpp"
#include "tessera/backends/kokkos/conv_kernels.hpp"

namespace kb = tessera::kokkos_backend;
using tessera::Shape;
using tessera::Tensor;
using tessera::testing::random_vector;

TEST_CASE("add_channel_bias adds bias[c] to every position's channel c", "[conv][kernels]") {
  const int64_t positions = 37, channels = 5;
  const auto y0 = random_vector<float>(positions * channels, 11u);
  const auto b = random_vector<float>(channels, 12u);
  Tensor y(Shape{positions, channels}), bias(Shape{channels});
  y.copy_from_host(y0);
  bias.copy_from_host(b);
  kb::add_channel_bias(bias, y);
  const auto got = y.to_host();
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t c = 0; c < channels; ++c) {
      const auto i = static_cast<size_t>(p * channels + c);
      REQUIRE(got[i] == y0[i] + b[static_cast<size_t>(c)]);
    }
}

TEST_CASE("sum_channels sums each channel over the positions in double", "[conv][kernels]") {
  // From one block of positions to many, and a tail block shorter than the others.
  for (const int64_t positions : {int64_t{1}, int64_t{300}, int64_t{5000}}) {
    const int64_t channels = 3;
    const auto g = random_vector<float>(positions * channels, 13u, -2.0, 3.0);
    Tensor dy(Shape{positions, channels}), dbias(Shape{channels});
    dy.copy_from_host(g);
    kb::ConvWorkspace<float> workspace;
    kb::sum_channels(dy, dbias, workspace);
    const auto got = dbias.to_host();
    for (int64_t c = 0; c < channels; ++c) {
      double s = 0.0;
      for (int64_t p = 0; p < positions; ++p) s += static_cast<double>(g[static_cast<size_t>(p * channels + c)]);
      CHECK(got[static_cast<size_t>(c)] == Approx(static_cast<float>(s)).epsilon(1e-6));
    }
  }
}

TEST_CASE("sum_channels gives conv_backward_weights' bias gradient bit for bit", "[conv][kernels]") {
  const auto geometry = tessera::testing::conv3d(2, 2, 5, {6, 9, 10}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  const Tensor x(geometry.input_shape()), dy(geometry.output_shape()), dw(geometry.weight_shape());
  x.copy_from_host(random_vector<float>(static_cast<size_t>(geometry.input_shape().numel()), 14u));
  dy.copy_from_host(random_vector<float>(static_cast<size_t>(geometry.output_shape().numel()), 15u));
  Tensor conv_dbias(Shape{5}), dbias(Shape{5});
  kb::ConvWorkspace<float> workspace;
  kb::conv_backward_weights<float>(geometry, x.view(), dy.view(), dw.view(), conv_dbias.view(), workspace);
  kb::sum_channels(dy, dbias, workspace);
  CHECK(dbias.to_host() == conv_dbias.to_host());
}
