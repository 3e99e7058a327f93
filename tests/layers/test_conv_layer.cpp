// The Conv layer through the layer API in float32: gradients of input, weight and bias against
// finite differences, configuration keys, shape errors, and a batch size that changes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/layer_harness.hpp"
#include "support/test_parameters.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/conv.hpp"

namespace {

using tessera::Shape;
using tessera::Tensor;
using tessera::layers::Conv;
using tessera::layers::ConvOptions;
using tessera::testing::LayerHarness;
using tessera::testing::random_vector;
using Floats = std::vector<float>;

struct Reached {
  double dx = 0.0, dw = 0.0, db = 0.0;
};

/// Checks dL/dx, dL/dw and dL/dbias of the layer against central differences. L is linear in
/// each of them, so the step can be large and only float rounding separates the two.
void check_layer_gradients(const ConvOptions& o, const Shape& in, unsigned seed, Reached& reached) {
  LayerHarness h(std::make_unique<Conv>("c", o), {in});
  INFO("conv " << h.layer().type() << " input " << in.str() << " output " << h.output().shape().str());
  h.input(0).copy_from_host(random_vector<float>(static_cast<size_t>(in.numel()), seed));
  h.params()["c.bias"].value.copy_from_host(random_vector<float>(static_cast<size_t>(o.filters), seed + 2));
  const double tolerance = 2e-2;
  const auto report = h.check_gradients({}, 0.05, 1e-2, 1, seed + 1);
  const double dx = report.rel_error.at("input 0"), dw = report.rel_error.at("c.weight"),
               db = report.rel_error.at("c.bias");
  INFO(report.worst);
  CHECK(dx < tolerance);
  CHECK(dw < tolerance);
  CHECK(db < tolerance);
  reached.dx = std::max(reached.dx, dx);
  reached.dw = std::max(reached.dw, dw);
  reached.db = std::max(reached.db, db);
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
  tessera::registry::OpFactory factory("kokkos");
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
  const Shape in{2, 5, 7, 6, 3};
  LayerHarness f(std::make_unique<Conv>("c", o), {in});
  CHECK(f.output().shape() == Shape{2, 3, 4, 3, 4});
  CHECK(f.params()["c.weight"].shape == Shape{4, 3, 3, 3, 3});
  CHECK(f.params()["c.weight"].fan_in == 27 * 3);
  CHECK(f.params()["c.bias"].shape == Shape{4});
  CHECK(f.layer().backend() == "kokkos");
  CHECK(f.layer().forward_flops({in}) == 2.0 * 27 * 3 * 4 * (3 * 4 * 3));

  ConvOptions no_bias = o;
  no_bias.bias = false;
  LayerHarness g(std::make_unique<Conv>("c", no_bias), {in});
  CHECK_FALSE(g.params().has("c.bias"));

  // The last, smaller batch: reshape, then the same weights give the first sample's output.
  const Floats x = random_vector<float>(static_cast<size_t>(in.numel()), 9);
  f.input(0).copy_from_host(x);
  const Floats y2 = f.forward();
  const Shape one{1, 5, 7, 6, 3};
  f.layer().reshape({one});
  Tensor x1(one), y1(f.layer().output_shape({one}));
  x1.copy_from_host(Floats(x.begin(), x.begin() + one.numel()));
  f.layer().forward({x1}, y1, {});
  const Floats y = y1.to_host();
  REQUIRE(y.size() * 2 == y2.size());
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(y2[i]).margin(1e-5));

  // A different channel count than at setup is an error, not a silent reinterpretation.
  CHECK_THROWS_AS(f.layer().reshape({Shape{1, 5, 7, 6, 2}}), tessera::ShapeError);

  // Backward without an input gradient still writes the parameter gradients.
  Tensor dy(y1.shape());
  dy.fill(1.0f);
  f.params()["c.bias"].grad.fill(0.0f);
  f.layer().backward({x1}, y1, dy, {Tensor()}, {});
  for (float v : f.params()["c.bias"].grad.to_host()) CHECK(v == Approx(3 * 4 * 3));
}
