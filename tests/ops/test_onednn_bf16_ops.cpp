// oneDNN's bf16 convolution, pooling and activations against its own fp32 ops on the same
// values, within bf16's rounding (support/half_op_checks.hpp). The weight gradient is written
// in fp32 from exact bf16 inputs: only the order of the fp32 sums differs.
#include "tessera/build_info.hpp"

#if TESSERA_ENABLE_ONEDNN

#include <catch2/catch.hpp>

#include <string>

#include "support/backend_comparison.hpp"
#include "support/conv_geometry.hpp"
#include "support/half_op_checks.hpp"
#include "support/skip.hpp"
#include "tessera/backends/onednn/onednn_backend.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/registry/backend_registry.hpp"
#include "tessera/registry/op_factory.hpp"

namespace {

using namespace tessera;

bool skip_without_bf16() { return !onednn_backend::has_bf16_instructions(); }

void compare_conv(const ops::ConvGeometry& g32, uint32_t seed) {
  testing::check_half_conv(registry::backend("onednn"), g32, ElementType::bf16, seed, 0.0);
}

}  // namespace

TEST_CASE("onednn bf16 convolution stays within bf16's rounding of the fp32 result, every pass",
          "[onednn][conv][precision]") {
  if (skip_without_bf16())
    TESSERA_SKIP("bf16-cpu", "oneDNN dispatches " + onednn_backend::dispatched_isa() + ", without bf16 instructions");
  compare_conv(testing::conv3d(2, 4, 16, {8, 8, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), 11);
  compare_conv(testing::conv3d(1, 32, 32, {6, 5, 7}, {3, 3, 3}, {2, 1, 2}, {1, 1, 1}, {1, 1, 1}), 21);
  compare_conv(testing::conv3d(2, 16, 8, {4, 4, 4}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}), 31);
  ops::ConvGeometry g2 = testing::conv3d(2, 8, 16, {1, 9, 9}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1});
  g2.spatial_rank = 2;
  compare_conv(g2, 41);
}

TEST_CASE("onednn bf16 pooling and activations match fp32 within bf16's rounding", "[onednn][pool][eltwise][precision]") {
  if (skip_without_bf16())
    TESSERA_SKIP("bf16-cpu", "oneDNN dispatches " + onednn_backend::dispatched_isa() + ", without bf16 instructions");
  testing::check_half_pool(registry::backend("onednn"), ElementType::bf16);
  testing::check_half_eltwise(registry::backend("onednn"), ElementType::bf16,
                              {ops::EltwiseKind::relu, ops::EltwiseKind::leaky_relu, ops::EltwiseKind::elu,
                               ops::EltwiseKind::tanh});
}

TEST_CASE("a bf16 op is refused, with the reason, by backends and CPUs that cannot run it", "[ops][precision]") {
  ops::ConvGeometry g = testing::conv3d(1, 4, 8, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  g.type = ElementType::bf16;
  std::string why;
  auto op = registry::backend("onednn").make_conv(g, &why);
  CHECK(static_cast<bool>(op) == onednn_backend::has_bf16_instructions());
  if (!op) CHECK_THAT(why, Catch::Contains("this CPU has no bf16 instructions"));
  g.type = ElementType::fp16;
  CHECK_FALSE(registry::backend("onednn").make_conv(g, &why));
  CHECK_THAT(why, Catch::Contains("no fp16 on CPUs"));
  const registry::OpFactory kokkos_only("kokkos");
  CHECK_THROWS_WITH(kokkos_only.conv(g, "conv1"), Catch::Contains("layer 'conv1'") &&
                                                      Catch::Contains("no fp16 convolution in the kokkos backend"));
}

TEST_CASE("onednn bf16 ops refuse tensors of another type", "[onednn][precision]") {
  if (skip_without_bf16())
    TESSERA_SKIP("bf16-cpu", "oneDNN dispatches " + onednn_backend::dispatched_isa() + ", without bf16 instructions");
  ops::ConvGeometry g = testing::conv3d(1, 4, 8, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  g.type = ElementType::bf16;
  auto op = registry::backend("onednn").make_conv(g);
  const Tensor x(g.input_shape()), w(g.weight_shape());
  Tensor y(g.output_shape(), ElementType::bf16);
  CHECK_THROWS_WITH(op->forward(x, w, Tensor(), y), Catch::Contains("input is fp32, expected bf16"));
}

#endif  // TESSERA_ENABLE_ONEDNN
