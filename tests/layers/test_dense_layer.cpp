// The dense layer: configuration, y = x·wᵀ + b, gradients, FLOPs and its rank check.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "support/layer_harness.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/dense.hpp"

using tessera::ConfigError;
using tessera::ConfigObject;
using tessera::Shape;
using tessera::ShapeError;
using tessera::layers::Dense;
using tessera::testing::LayerHarness;
using tessera::testing::random_vector;

TEST_CASE("dense layer configuration", "[dense][layer]") {
  nlohmann::json json = {{"units", 10}};
  ConfigObject cfg(json, "$.layers[4]");
  auto layer = Dense::from_json("fc", cfg, 0);
  cfg.finish();
  const auto& dense = dynamic_cast<const Dense&>(*layer);
  CHECK(dense.type() == "dense");
  CHECK(dense.units() == 10);
  CHECK(dense.has_bias());

  nlohmann::json no_bias = {{"units", 3}, {"bias", false}};
  ConfigObject no_bias_cfg(no_bias, "$.layers[4]");
  CHECK_FALSE(dynamic_cast<const Dense&>(*Dense::from_json("fc", no_bias_cfg, 0)).has_bias());

  nlohmann::json missing = nlohmann::json::object();
  ConfigObject missing_cfg(missing, "$.layers[4]");
  CHECK_THROWS_AS(Dense::from_json("fc", missing_cfg, 0), ConfigError);
  nlohmann::json zero = {{"units", 0}};
  ConfigObject zero_cfg(zero, "$.layers[4]");
  CHECK_THROWS_WITH(Dense::from_json("fc", zero_cfg, 0), Catch::Contains("$.layers[4].units"));
}

TEST_CASE("dense layer rejects a spatial input and asks for a flatten layer", "[dense][layer]") {
  Dense dense("fc", 4, true);
  CHECK(dense.output_shape({Shape{8, 32}}) == Shape{8, 4});
  CHECK_THROWS_AS(dense.output_shape({Shape{8, 4, 4, 4, 2}}), ShapeError);
  CHECK_THROWS_WITH(dense.output_shape({Shape{8, 4, 4, 4, 2}}), Catch::Contains("layer 'fc' (dense)") &&
                                                                    Catch::Contains("[8, 4, 4, 4, 2]") &&
                                                                    Catch::Contains("flatten"));
}

TEST_CASE("dense layer computes x·wᵀ + b and reports its FLOPs", "[dense][layer]") {
  LayerHarness h(std::make_unique<Dense>("fc", 2, true), {Shape{2, 3}});
  CHECK(h.layer().backend() == "kokkos");
  CHECK(h.params().at("fc.weight").shape == Shape{2, 3});
  CHECK(h.params().at("fc.weight").init == tessera::layers::Init::weight);
  CHECK(h.params().at("fc.weight").fan_in == 3);
  CHECK(h.params().at("fc.bias").shape == Shape{2});
  h.input(0).copy_from_host({1, 2, 3, 4, 5, 6});
  h.params().at("fc.weight").value.copy_from_host({1, 0, -1, 0.5f, 0.5f, 0.5f});
  h.params().at("fc.bias").value.copy_from_host({10, 20});
  CHECK(h.forward() == std::vector<float>{8.0f, 23.0f, 8.0f, 27.5f});
  CHECK(h.layer().forward_flops({Shape{2, 3}}) == 12.0);
}

TEST_CASE("dense layer gradients match finite differences", "[dense][layer][gradient]") {
  for (const bool bias : {true, false}) {
    LayerHarness h(std::make_unique<Dense>("fc", 5, bias), {Shape{4, 6}});
    const auto report = h.check_gradients({}, 1e-2, 1e-2);
    std::printf("[tolerance] dense layer 6->5 bias=%d (float): max_rel_error %.3g (limit 2e-2)\n", bias,
                report.worst_rel_error);
    INFO(report.worst);
    CHECK(report.worst_rel_error < 2e-2);
    CHECK(report.lines.size() == (bias ? 3u : 2u));
  }
}

TEST_CASE("dense layer overwrites its parameter gradients and skips unwanted input gradients", "[dense][layer]") {
  LayerHarness h(std::make_unique<Dense>("fc", 3, true), {Shape{2, 4}});
  h.forward();
  const auto dy = random_vector<float>(6, 91u);
  const auto grads = h.backward(dy, {}, {false});
  CHECK(grads[0].empty());
  const auto dw = h.params().at("fc.weight").grad.to_host();
  const auto db = h.params().at("fc.bias").grad.to_host();
  h.backward(dy, {}, {false});
  CHECK(h.params().at("fc.weight").grad.to_host() == dw);
  CHECK(h.params().at("fc.bias").grad.to_host() == db);
  CHECK(db[0] == Approx(dy[0] + dy[3]));
}
