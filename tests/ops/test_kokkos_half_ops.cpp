// The Kokkos backend's 16-bit ops (activations, inner products; convolutions and pooling in
// bf16) against its fp32 ops on the same values, within bf16's and fp16's rounding
// (support/half_op_checks.hpp); and the ops it has only in fp32 and bf16 are declined in fp16
// with the reason.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <tuple>

#include "support/conv_geometry.hpp"
#include "support/half_op_checks.hpp"
#include "tessera/registry/backend_registry.hpp"

using namespace tessera;

TEST_CASE("kokkos activations compute in fp32 on bf16 and fp16 tensors, rounding once", "[ops][eltwise][precision]") {
  for (const ElementType type : {ElementType::bf16, ElementType::fp16})
    testing::check_half_eltwise(registry::backend("kokkos"), type,
                                {ops::EltwiseKind::relu, ops::EltwiseKind::leaky_relu, ops::EltwiseKind::elu,
                                 ops::EltwiseKind::tanh, ops::EltwiseKind::gelu});
}

TEST_CASE("kokkos inner products of bf16 and fp16 layers: 16-bit products, fp32 sums and gradients",
          "[ops][inner_product][precision]") {
  for (const ElementType type : {ElementType::bf16, ElementType::fp16})
    testing::check_half_inner_product(registry::backend("kokkos"), type);
}

TEST_CASE("kokkos bf16 convolutions: bf16 products, fp32 sums, fp32 weight gradients, every pass",
          "[ops][conv][precision]") {
  auto& kokkos = registry::backend("kokkos");
  testing::check_half_conv(kokkos, testing::conv3d(2, 4, 16, {8, 8, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
                           ElementType::bf16, 11, 0.0);
  testing::check_half_conv(kokkos, testing::conv3d(1, 5, 7, {6, 5, 7}, {3, 3, 3}, {2, 1, 2}, {1, 1, 1}, {1, 1, 1}),
                           ElementType::bf16, 21, 0.0);
  ops::ConvGeometry g2 = testing::conv3d(2, 3, 8, {1, 9, 9}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1});
  g2.spatial_rank = 2;
  testing::check_half_conv(kokkos, g2, ElementType::bf16, 41, 0.0);
}

TEST_CASE("kokkos bf16 pooling: a max exact, an average rounded once", "[ops][pool][precision]") {
  testing::check_half_pool(registry::backend("kokkos"), ElementType::bf16);
}

TEST_CASE("kokkos declines fp16 convolutions, pooling and batch norm, saying so", "[ops][precision]") {
  auto& kokkos = registry::backend("kokkos");
  ops::ConvGeometry g = testing::conv3d(1, 4, 8, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  g.type = ElementType::fp16;
  std::string why;
  CHECK_FALSE(kokkos.make_conv(g, &why));
  CHECK(why == "no fp16 convolution in the kokkos backend");
  ops::PoolGeometry p;
  p.type = ElementType::fp16;
  CHECK_FALSE(kokkos.make_pool(p, &why));
  CHECK(why == "no fp16 pooling in the kokkos backend");
  ops::BatchNormGeometry b;
  b.type = ElementType::fp16;
  CHECK_FALSE(kokkos.make_batch_norm(b, &why));
  CHECK(why == "no fp16 batch norm in the kokkos backend");
}

TEST_CASE("kokkos bf16 max pooling: the same maxima and gradients whether its windows tile the input or not",
          "[ops][pool][precision]") {
  // Tiling windows pool the bf16 values directly; the others (an odd extent, overlapping
  // padded windows) pool an fp32 copy. Both equal fp32 pooling of the same values, the
  // gradient rounded once to bf16.
  auto& kokkos = registry::backend("kokkos");
  for (const auto& [size, k, s, p] : {std::tuple<std::array<int64_t, 3>, int64_t, int64_t, int64_t>{{8, 6, 8}, 2, 2, 0},
                                      {{7, 5, 8}, 2, 2, 0},
                                      {{6, 6, 6}, 3, 2, 1}}) {
    for (const int64_t channels : {5, 21}) {  // 21: a whole block of channels and 5 past it
      ops::PoolGeometry g;
      g.batch = 2;
      g.channels = channels;
      g.in_size = size;
      g.kernel = {k, k, k};
      g.stride = {s, s, s};
      g.padding = {p, p, p};
      INFO(g.str());
      ops::PoolGeometry g16 = g;
      g16.type = ElementType::bf16;
      auto op32 = kokkos.make_pool(g), op16 = kokkos.make_pool(g16);
      REQUIRE(op16);
      const Tensor x16 = testing::half_values(g.input_shape(), 7, ElementType::bf16, ElementType::bf16);
      const Tensor dy16 = testing::half_values(g.output_shape(), 8, ElementType::bf16, ElementType::bf16);
      const Tensor x = testing::as_fp32(x16), dy = testing::as_fp32(dy16);
      Tensor y(g.output_shape()), y16(g.output_shape(), ElementType::bf16);
      Tensor dx(g.input_shape()), dx16(g.input_shape(), ElementType::bf16);
      op32->forward(x, y);
      op16->forward(x16, y16);
      op32->backward(x, dy, dx);
      op16->backward(x16, dy16, dx16);
      CHECK(y16.to_host() == y.to_host());
      // Where windows overlap, an input's gradient is a sum, formed in fp32 and rounded once.
      Tensor dx_rounded(g.input_shape(), ElementType::bf16);
      deep_copy(dx_rounded, dx);
      CHECK(dx16.to_host() == dx_rounded.to_host());
    }
  }
}
