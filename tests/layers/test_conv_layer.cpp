// The Conv layer through the layer API in float32: gradients of input, weight and bias against
// finite differences, configuration keys, shape errors, and a batch size that changes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/gradient_check.hpp"
#include "support/test_parameters.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/conv.hpp"

namespace {

using tessera::Shape;
using tessera::Tensor;
using tessera::layers::Conv;
using tessera::layers::ConvOptions;
using tessera::testing::check_gradient;
using tessera::testing::random_vector;
using Floats = std::vector<float>;

/// A layer set up on the Kokkos backend with its own parameters.
struct ConvFixture {
  tessera::testing::TestParameters params;
  tessera::ops::OpFactory factory{"kokkos"};
  Conv layer;
  Shape in, out;
  Tensor x_buffer, y_buffer;  // reused by loss(): finite differences call it thousands of times

  ConvFixture(const ConvOptions& o, const Shape& input) : layer("c", o), in(input) {
    tessera::layers::LayerContext ctx;
    ctx.ops = &factory;
    layer.setup({in}, ctx, params);
    out = layer.output_shape({in});
    x_buffer = Tensor(in);
    y_buffer = Tensor(out);
  }

  /// L = Σ y·r accumulated in double.
  double loss(const Floats& x, const Floats& r) {
    x_buffer.copy_from_host(x);
    layer.forward({x_buffer}, y_buffer, {});
    const Floats y = y_buffer.to_host();
    double s = 0.0;
    for (size_t i = 0; i < y.size(); ++i) s += static_cast<double>(y[i]) * r[i];
    return s;
  }
};

struct Reached {
  double dx = 0.0, dw = 0.0, db = 0.0;
};

/// Checks dL/dx, dL/dw and dL/dbias of the layer against central differences. L is linear in
/// each of them, so the step can be large and only float rounding separates the two.
void check_layer_gradients(const ConvOptions& o, const Shape& in, unsigned seed, Reached& reached) {
  ConvFixture f(o, in);
  INFO("conv " << f.layer.type() << " input " << in.str() << " output " << f.out.str());
  auto& weight = f.params["c.weight"];
  auto& bias = f.params["c.bias"];
  const Floats x = random_vector<float>(static_cast<size_t>(in.numel()), seed);
  const Floats r = random_vector<float>(static_cast<size_t>(f.out.numel()), seed + 1);
  const Floats w = weight.value.to_host();
  const Floats b = random_vector<float>(static_cast<size_t>(o.filters), seed + 2);
  bias.value.copy_from_host(b);

  Tensor xt(in), yt(f.out), dyt(f.out), dxt(in);
  xt.copy_from_host(x);
  dyt.copy_from_host(r);
  dxt.fill(1e30f);  // backward must overwrite, not accumulate
  weight.grad.fill(1e30f);
  bias.grad.fill(1e30f);
  f.layer.forward({xt}, yt, {});
  f.layer.backward({xt}, yt, dyt, {dxt}, {});
  const Floats dx = dxt.to_host(), dw = weight.grad.to_host(), db = bias.grad.to_host();

  const double h = 0.05, floor = 1e-2, tolerance = 2e-2;
  const auto cx = check_gradient<float>(
      x, dx, [&](const Floats& v) { return f.loss(v, r); }, h, floor);
  const auto cw = check_gradient<float>(
      w, dw,
      [&](const Floats& v) {
        weight.value.copy_from_host(v);
        return f.loss(x, r);
      },
      h, floor);
  weight.value.copy_from_host(w);
  const auto cb = check_gradient<float>(
      b, db,
      [&](const Floats& v) {
        bias.value.copy_from_host(v);
        return f.loss(x, r);
      },
      h, floor);
  INFO("dx " << cx.str() << "; dw " << cw.str() << "; dbias " << cb.str());
  CHECK(cx.max_rel_error < tolerance);
  CHECK(cw.max_rel_error < tolerance);
  CHECK(cb.max_rel_error < tolerance);
  reached.dx = std::max(reached.dx, cx.max_rel_error);
  reached.dw = std::max(reached.dw, cw.max_rel_error);
  reached.db = std::max(reached.db, cb.max_rel_error);
}

ConvOptions options(int rank, int64_t filters, int64_t k, int64_t s, int64_t p, int64_t d = 1) {
  ConvOptions o;
  o.spatial_rank = rank;
  o.filters = filters;
  const int64_t depth_k = rank == 2 ? 1 : k, depth_s = rank == 2 ? 1 : s, depth_p = rank == 2 ? 0 : p,
                depth_d = rank == 2 ? 1 : d;
  o.kernel = {depth_k, k, k};
  o.stride = {depth_s, s, s};
  o.padding = {depth_p, p, p};
  o.dilation = {depth_d, d, d};
  return o;
}

std::unique_ptr<tessera::layers::Layer> from_json(const nlohmann::json& j, int rank) {
  tessera::ConfigObject cfg(j, "$.layers[0]");
  auto layer = Conv::from_json("c", cfg, rank);
  cfg.finish();
  return layer;
}

}  // namespace

TEST_CASE("conv layer: float32 gradients match finite differences", "[conv][layers]") {
  Reached reached;
  check_layer_gradients(options(2, 4, 3, 1, 1), Shape{2, 7, 6, 3}, 1, reached);
  check_layer_gradients(options(2, 2, 3, 2, 2, 2), Shape{2, 9, 7, 1}, 2, reached);
  check_layer_gradients(options(3, 3, 3, 2, 1), Shape{2, 5, 7, 6, 2}, 3, reached);
  check_layer_gradients(options(3, 2, 1, 1, 0), Shape{2, 3, 4, 5, 3}, 4, reached);
  std::printf(
      "[tolerance] conv layer float32: max_rel_err dx %.1e, dw %.1e, dbias %.1e "
      "(asserted < 2e-2, floor 1e-2, step 0.05)\n",
      reached.dx, reached.dw, reached.db);
}

TEST_CASE("conv layer: configuration keys", "[conv][layers]") {
  auto layer = from_json(
      {{"filters", 8}, {"kernel", {3, 1, 5}}, {"stride", 2}, {"padding", {1, 0, 2}}, {"dilation", 1}, {"bias", false}},
      3);
  auto& conv = dynamic_cast<Conv&>(*layer);
  CHECK(conv.type() == "conv3d");
  CHECK(conv.options().filters == 8);
  CHECK(conv.options().kernel == std::array<int64_t, 3>{3, 1, 5});
  CHECK(conv.options().stride == std::array<int64_t, 3>{2, 2, 2});
  CHECK(conv.options().padding == std::array<int64_t, 3>{1, 0, 2});
  CHECK_FALSE(conv.options().bias);
  CHECK(conv.output_shape({Shape{4, 9, 9, 9, 2}}) == Shape{4, 5, 5, 5, 8});

  auto defaults = from_json({{"filters", 4}}, 2);
  auto& conv2d = dynamic_cast<Conv&>(*defaults);
  CHECK(conv2d.type() == "conv2d");
  CHECK(conv2d.options().kernel == std::array<int64_t, 3>{1, 3, 3});
  CHECK(conv2d.options().stride == std::array<int64_t, 3>{1, 1, 1});
  CHECK(conv2d.options().padding == std::array<int64_t, 3>{0, 0, 0});
  CHECK(conv2d.options().bias);
  CHECK(conv2d.output_shape({Shape{1, 8, 6, 3}}) == Shape{1, 6, 4, 4});

  CHECK_THROWS_AS(from_json(nlohmann::json::object(), 3), tessera::ConfigError);
  CHECK_THROWS_WITH(from_json({{"filters", 0}}, 3), Catch::Contains("filters"));
  CHECK_THROWS_WITH(from_json({{"filters", 2}, {"kernel", {3, 3}}}, 3), Catch::Contains("kernel"));
  CHECK_THROWS_WITH(from_json({{"filters", 2}, {"stride", 0}}, 3), Catch::Contains("stride"));
  CHECK_THROWS_WITH(from_json({{"filters", 2}, {"kernal", 3}}, 3), Catch::Contains("kernal"));
}

TEST_CASE("conv layer: shape errors name the layer and the shape", "[conv][layers]") {
  tessera::testing::TestParameters params;
  tessera::ops::OpFactory factory("kokkos");
  tessera::layers::LayerContext ctx;
  ctx.ops = &factory;

  Conv conv3d("c3", options(3, 4, 3, 1, 1));
  CHECK_THROWS_AS(conv3d.output_shape({Shape{2, 8, 8, 3}}), tessera::ShapeError);
  CHECK_THROWS_WITH(conv3d.output_shape({Shape{2, 8, 8, 3}}),
                    Catch::Contains("layer 'c3' (conv3d)") && Catch::Contains("[2, 8, 8, 3]"));
  CHECK_THROWS_AS(conv3d.setup({Shape{2, 8, 8, 3}}, ctx, params), tessera::ShapeError);

  Conv conv2d("c2", options(2, 4, 3, 1, 0));
  CHECK_THROWS_WITH(conv2d.output_shape({Shape{2, 4, 8, 8, 3}}),
                    Catch::Contains("layer 'c2' (conv2d)") && Catch::Contains("[2, 4, 8, 8, 3]"));
  // A 3x3 kernel without padding does not fit a 2-pixel-high input.
  CHECK_THROWS_WITH(conv2d.output_shape({Shape{2, 2, 8, 3}}),
                    Catch::Contains("layer 'c2' (conv2d)") && Catch::Contains("height"));
  Conv dilated("c4", options(3, 4, 3, 1, 0, 3));  // spans 7 voxels
  CHECK_THROWS_AS(dilated.output_shape({Shape{1, 6, 9, 9, 1}}), tessera::ShapeError);
  CHECK(dilated.output_shape({Shape{1, 7, 9, 9, 1}}) == Shape{1, 1, 3, 3, 4});
  CHECK_THROWS_AS(conv3d.output_shape({Shape{2, 8, 8, 8, 3}, Shape{2, 8, 8, 8, 3}}), tessera::ShapeError);
}

TEST_CASE("conv layer: parameters, flops and a batch size that changes", "[conv][layers]") {
  ConvOptions o = options(3, 4, 3, 2, 1);
  ConvFixture f(o, Shape{2, 5, 7, 6, 3});
  CHECK(f.out == Shape{2, 3, 4, 3, 4});
  CHECK(f.params["c.weight"].shape == Shape{4, 3, 3, 3, 3});
  CHECK(f.params["c.weight"].fan_in == 27 * 3);
  CHECK(f.params["c.bias"].shape == Shape{4});
  CHECK(f.layer.backend() == "kokkos");
  CHECK(f.layer.forward_flops({f.in}) == 2.0 * 27 * 3 * 4 * (3 * 4 * 3));

  ConvOptions no_bias = o;
  no_bias.bias = false;
  ConvFixture g(no_bias, Shape{2, 5, 7, 6, 3});
  CHECK_FALSE(g.params.has("c.bias"));

  // The last, smaller batch: reshape, then the same weights give the first sample's output.
  const Floats x = random_vector<float>(static_cast<size_t>(f.in.numel()), 9);
  Tensor xt(f.in), yt(f.out);
  xt.copy_from_host(x);
  f.layer.forward({xt}, yt, {});
  const Floats y2 = yt.to_host();
  const Shape one{1, 5, 7, 6, 3};
  f.layer.reshape({one});
  Tensor x1(one), y1(f.layer.output_shape({one}));
  x1.copy_from_host(Floats(x.begin(), x.begin() + one.numel()));
  f.layer.forward({x1}, y1, {});
  const Floats y = y1.to_host();
  REQUIRE(y.size() * 2 == y2.size());
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(y2[i]).margin(1e-5));

  // A different channel count than at setup is an error, not a silent reinterpretation.
  CHECK_THROWS_AS(f.layer.reshape({Shape{1, 5, 7, 6, 2}}), tessera::ShapeError);

  // Backward without an input gradient still writes the parameter gradients.
  Tensor dy(y1.shape());
  dy.fill(1.0f);
  f.params["c.bias"].grad.fill(0.0f);
  f.layer.backward({x1}, y1, dy, {Tensor()}, {});
  for (float v : f.params["c.bias"].grad.to_host()) CHECK(v == Approx(3 * 4 * 3));
}
