// The GlobalAvgPool layer through the layer API: forward against means computed here,
// gradients against finite differences (2D and 3D), the model-spec names and shape errors.
#include <catch2/catch.hpp>

#include <cstdio>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/layer_harness.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/global_avg_pool.hpp"
#include "tessera/model/layer_registry.hpp"

namespace {

using tessera::Shape;
using tessera::layers::GlobalAvgPool;
using tessera::testing::LayerHarness;

}  // namespace

TEST_CASE("global average pool: forward is each channel's mean over a sample's positions", "[pool][layers]") {
  for (const Shape& in : {Shape{3, 5, 4, 2}, Shape{2, 3, 4, 5, 3}}) {
    const int rank = in.rank() - 2;
    LayerHarness h(std::make_unique<GlobalAvgPool>("gap", rank), {in});
    REQUIRE(h.output().shape() == Shape{in[0], in[in.rank() - 1]});
    const std::vector<float> x = h.input(0).to_host();
    const std::vector<float> y = h.forward();
    const int64_t n = in[0], c = in[in.rank() - 1], s = in.numel() / (n * c);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < c; ++k) {
        double mean = 0.0;
        for (int64_t p = 0; p < s; ++p) mean += x[static_cast<size_t>((i * s + p) * c + k)];
        mean /= static_cast<double>(s);
        INFO(in.str() << " sample " << i << " channel " << k);
        CHECK(y[static_cast<size_t>(i * c + k)] == Approx(mean).margin(1e-6));
      }
  }
}

TEST_CASE("global average pool: input gradients match finite differences", "[pool][layers]") {
  double reached = 0.0;
  for (const Shape& in : {Shape{2, 7, 6, 3}, Shape{3, 1, 1, 4}, Shape{2, 3, 4, 5, 2}}) {
    LayerHarness h(std::make_unique<GlobalAvgPool>("gap", in.rank() - 2), {in});
    const auto report = h.check_gradients({}, 5e-2, 1e-2, 1, 9);
    INFO(in.str() << ": " << report.worst);
    CHECK(report.rel_error.at("input 0") < 1e-2);
    reached = std::max(reached, report.rel_error.at("input 0"));
  }
  std::printf("[tolerance] global average pool float32: dx max_rel_err %.1e (asserted < 1e-2, floor 1e-2)\n", reached);
}

TEST_CASE("global average pool: spec names, keys and shape errors", "[pool][layers]") {
  nlohmann::json empty = nlohmann::json::object();
  tessera::ConfigObject cfg2(empty, "$.model.layers[4]");
  const auto two = tessera::model::make_layer("global_avg_pool2d", "gap", cfg2);
  CHECK(two->type() == "global_avg_pool2d");
  CHECK(two->output_shape({Shape{8, 7, 7, 64}}) == Shape{8, 64});
  CHECK_THROWS_AS(two->output_shape({Shape{8, 1, 7, 7, 64}}), tessera::ShapeError);
  CHECK_THROWS_WITH(two->output_shape({Shape{8, 1, 7, 7, 64}}), Catch::Contains("layer 'gap' (global_avg_pool2d)") &&
                                                                    Catch::Contains("[N, H, W, C]") &&
                                                                    Catch::Contains("[8, 1, 7, 7, 64]"));
  tessera::ConfigObject cfg3(empty, "$.model.layers[4]");
  const auto three = tessera::model::make_layer("global_avg_pool3d", "gap3", cfg3);
  CHECK(three->output_shape({Shape{2, 4, 4, 4, 16}}) == Shape{2, 16});
  CHECK_THROWS_WITH(three->output_shape({Shape{2, 4, 4, 16}}), Catch::Contains("[N, D, H, W, C]"));
  CHECK_THROWS_WITH(three->output_shape({Shape{2, 4, 4, 4, 16}, Shape{2, 4, 4, 4, 16}}),
                    Catch::Contains("expected one input, got 2"));
}
