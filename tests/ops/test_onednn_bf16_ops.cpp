// oneDNN's bf16 convolution, pooling and activations against its own fp32 ops on the same
// values. The inputs are bf16 values (so both runs read the same numbers); what bf16 changes
// is then the weights' rounding to bf16 inside the op and the output's rounding, each at most
// the unit roundoff u = 2^-8 relative, so every element must lie within
//   u·|y| + u·(|x| ⊛ |w|)  (plus fp32 summation error)
// of the fp32 result, with |x| ⊛ |w| the same op on absolute values. The weight gradient is
// written in fp32 from exact bf16 inputs: only the order of the fp32 sums differs.
#include "tessera/build_info.hpp"

#if TESSERA_ENABLE_ONEDNN

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/backend_comparison.hpp"
#include "support/conv_geometry.hpp"
#include "support/skip.hpp"
#include "tessera/backends/onednn/onednn_backend.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/registry/backend_registry.hpp"
#include "tessera/registry/op_factory.hpp"

namespace {

using namespace tessera;
constexpr double u = 0x1p-8;

/// Random values in [-1, 1] that bf16 holds exactly (random_tensor's, rounded), in a tensor of
/// `type`.
Tensor bf16_values(const Shape& shape, uint32_t seed, ElementType type) {
  Tensor rounded(shape, ElementType::bf16);
  deep_copy(rounded, testing::random_tensor(shape, seed));
  if (type == ElementType::bf16) return rounded;
  Tensor t(shape, type);
  deep_copy(t, rounded);
  return t;
}

Tensor absolute(const Tensor& t) {
  std::vector<float> v = t.to_host();
  for (auto& e : v) e = std::fabs(e);
  Tensor a(t.shape());
  a.copy_from_host(v);
  return a;
}

Tensor as_fp32(const Tensor& t) {
  Tensor f(t.shape());
  deep_copy(f, t);
  return f;
}

/// Every element of `got` within rel·|want| + slack·bound of `want`.
void check_within(const std::string& what, const Tensor& got, const Tensor& want, const Tensor& bound, double rel,
                  double slack) {
  const auto g = got.to_host(), w = want.to_host(), b = bound.to_host();
  REQUIRE(g.size() == w.size());
  double worst = 0.0;  // the largest |error| / allowed
  for (size_t i = 0; i < g.size(); ++i) {
    const double allowed = rel * std::fabs(w[i]) + slack * b[i] + 1e-30;
    worst = std::max(worst, std::fabs(static_cast<double>(g[i]) - w[i]) / allowed);
  }
  INFO(what << ": worst error " << worst << " of the bound");
  CHECK(worst <= 1.0);
}

bool skip_without_bf16() { return !onednn_backend::has_bf16_instructions(); }

void compare_conv(const ops::ConvGeometry& g32, uint32_t seed) {
  INFO(g32.str());
  ops::ConvGeometry g16 = g32;
  g16.type = ElementType::bf16;
  auto& backend = registry::backend("onednn");
  auto op32 = backend.make_conv(g32), op16 = backend.make_conv(g16);
  REQUIRE(op32);
  REQUIRE(op16);
  const Tensor x16 = bf16_values(g32.input_shape(), seed, ElementType::bf16), x = as_fp32(x16);
  const Tensor dy16 = bf16_values(g32.output_shape(), seed + 1, ElementType::bf16), dy = as_fp32(dy16);
  const Tensor w = bf16_values(g32.weight_shape(), seed + 2, ElementType::fp32);
  // Weights that bf16 does not hold exactly, so that their rounding inside the op is tested.
  std::vector<float> wv = w.to_host();
  for (size_t i = 0; i < wv.size(); ++i) wv[i] *= 1.0f + 0x1p-10f * static_cast<float>(i % 7);
  w.copy_from_host(wv);
  const Tensor bias = bf16_values(Shape{g32.out_channels}, seed + 3, ElementType::fp32);

  Tensor y(g32.output_shape()), y16(g32.output_shape(), ElementType::bf16), y_abs(g32.output_shape());
  op32->forward(x, w, bias, y);
  op16->forward(x16, w, bias, y16);
  op32->forward(absolute(x), absolute(w), absolute(bias), y_abs);
  check_within("forward", y16, y, y_abs, u, 1.01 * u);

  Tensor dx(g32.input_shape()), dx16(g32.input_shape(), ElementType::bf16), dx_abs(g32.input_shape());
  op32->backward_data(dy, w, dx);
  op16->backward_data(dy16, w, dx16);
  op32->backward_data(absolute(dy), absolute(w), dx_abs);
  check_within("backward data", dx16, dx, dx_abs, u, 1.01 * u);

  Tensor dw(g32.weight_shape()), dw16(g32.weight_shape()), dw_abs(g32.weight_shape());
  Tensor db(Shape{g32.out_channels}), db16(Shape{g32.out_channels}), db_abs(Shape{g32.out_channels});
  op32->backward_weights(x, dy, dw, db);
  op16->backward_weights(x16, dy16, dw16, db16);
  op32->backward_weights(absolute(x), absolute(dy), dw_abs, db_abs);
  const double sums = static_cast<double>(g32.batch) * g32.out_size()[0] * g32.out_size()[1] * g32.out_size()[2];
  check_within("weight gradient (fp32)", dw16, dw, dw_abs, 0.0, 4 * sums * 0x1p-24);
  check_within("bias gradient (fp32)", db16, db, db_abs, 0.0, 4 * sums * 0x1p-24);
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
  auto& backend = registry::backend("onednn");
  for (const ops::PoolKind kind : {ops::PoolKind::max, ops::PoolKind::average}) {
    ops::PoolGeometry g;
    g.kind = kind;
    g.batch = 2;
    g.channels = 16;
    g.in_size = {8, 6, 8};
    g.kernel = g.stride = {2, 2, 2};
    INFO(g.str());
    ops::PoolGeometry g16 = g;
    g16.type = ElementType::bf16;
    auto op32 = backend.make_pool(g), op16 = backend.make_pool(g16);
    REQUIRE(op16);
    const Tensor x16 = bf16_values(g.input_shape(), 5, ElementType::bf16), x = as_fp32(x16);
    const Tensor dy16 = bf16_values(g.output_shape(), 6, ElementType::bf16), dy = as_fp32(dy16);
    Tensor y(g.output_shape()), y16(g.output_shape(), ElementType::bf16);
    Tensor dx(g.input_shape()), dx16(g.input_shape(), ElementType::bf16);
    op32->forward(x, y);
    op16->forward(x16, y16);
    op32->backward(x, dy, dx);
    op16->backward(x16, dy16, dx16);
    // A max picks one of the inputs and routes the gradient: exact. An average rounds once.
    const double rel = kind == ops::PoolKind::max ? 0.0 : u;
    check_within("pool forward", y16, y, y, rel, 1e-6);
    check_within("pool backward", dx16, dx, dx, rel, 1e-6);
  }
  ops::EltwiseDesc d{ops::EltwiseKind::leaky_relu, 0.01f};
  ops::EltwiseDesc d16 = d;
  d16.type = ElementType::bf16;
  auto op32 = backend.make_eltwise(d), op16 = backend.make_eltwise(d16);
  REQUIRE(op16);
  const Shape s{3, 7, 5, 4};
  const Tensor x16 = bf16_values(s, 7, ElementType::bf16), x = as_fp32(x16);
  const Tensor dy16 = bf16_values(s, 8, ElementType::bf16), dy = as_fp32(dy16);
  Tensor y(s), y16(s, ElementType::bf16), dx(s), dx16(s, ElementType::bf16);
  op32->forward(x, y);
  op16->forward(x16, y16);
  op32->backward(x, dy, dx);
  op16->backward(x16, dy16, dx16);
  check_within("leaky_relu forward", y16, y, y, u, 1e-6);
  check_within("leaky_relu backward", dx16, dx, dx, u, 1e-6);
}

TEST_CASE("a bf16 op is refused, with the reason, by backends and CPUs that cannot run it", "[ops][precision]") {
  ops::ConvGeometry g = testing::conv3d(1, 4, 8, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  g.type = ElementType::bf16;
  std::string why;
  CHECK_FALSE(registry::backend("kokkos").make_conv(g, &why));
  CHECK(why == "no bf16 convolution in the kokkos backend");
  auto op = registry::backend("onednn").make_conv(g, &why);
  CHECK(static_cast<bool>(op) == onednn_backend::has_bf16_instructions());
  if (!op) CHECK_THAT(why, Catch::Contains("this CPU has no bf16 instructions"));
  g.type = ElementType::fp16;
  CHECK_FALSE(registry::backend("onednn").make_conv(g, &why));
  CHECK(why == "oneDNN 2.x has no fp16 training kernels for CPUs");
  const registry::OpFactory kokkos_only("kokkos");
  g.type = ElementType::bf16;
  CHECK_THROWS_WITH(kokkos_only.conv(g, "conv1"), Catch::Contains("layer 'conv1'") &&
                                                      Catch::Contains("no bf16 convolution in the kokkos backend"));
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
