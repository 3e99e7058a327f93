// The layers that move data without parameters: flatten, add, concat, dropout.
#include <catch2/catch.hpp>
#include <cstdio>

#include "support/layer_harness.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/add.hpp"
#include "tessera/layers/concat.hpp"
#include "tessera/layers/dropout.hpp"
#include "tessera/layers/flatten.hpp"

using tessera::ConfigError;
using tessera::ConfigObject;
using tessera::Shape;
using tessera::ShapeError;
using tessera::layers::Add;
using tessera::layers::Concat;
using tessera::layers::Dropout;
using tessera::layers::Flatten;
using tessera::layers::Mode;
using tessera::layers::StepInfo;
using tessera::testing::LayerHarness;
using tessera::testing::random_vector;

namespace {

void report(const char* what, const LayerHarness::Report& r) {
  std::printf("[tolerance] %s (float): max_rel_error %.3g (limit 2e-2)\n", what, r.worst_rel_error);
}

}  // namespace

TEST_CASE("flatten keeps the channels-last order", "[flatten][layer]") {
  nlohmann::json json = nlohmann::json::object();
  ConfigObject cfg(json, "$.layers[0]");
  auto layer = Flatten::from_json("flat", cfg, 0);
  CHECK(layer->type() == "flatten");
  CHECK(layer->output_shape({Shape{2, 2, 3, 3, 4}}) == Shape{2, 72});
  CHECK(layer->output_shape({Shape{5, 7}}) == Shape{5, 7});

  LayerHarness h(std::move(layer), {Shape{2, 2, 3, 3, 4}});
  const auto x = h.input(0).to_host();
  CHECK(h.forward() == x);
  CHECK(h.output().shape() == Shape{2, 72});
  const auto r = h.check_gradients({}, 1e-2, 1e-2);
  report("flatten layer", r);
  CHECK(r.worst_rel_error < 2e-2);
}

TEST_CASE("add sums two or more inputs of one shape", "[add][layer]") {
  nlohmann::json json = nlohmann::json::object();
  ConfigObject cfg(json, "$.layers[0]");
  auto layer = Add::from_json("sum", cfg, 3);
  CHECK(layer->num_inputs() == -1);
  CHECK_THROWS_AS(layer->output_shape({Shape{2, 4, 4, 4, 3}}), ShapeError);
  CHECK_THROWS_WITH(layer->output_shape({Shape{2, 4, 4, 4, 3}, Shape{2, 4, 4, 4, 2}}),
                    Catch::Contains("layer 'sum' (add)") && Catch::Contains("[2, 4, 4, 4, 2]"));

  const Shape shape{2, 3, 2, 2, 2};
  LayerHarness h(std::move(layer), {shape, shape, shape});
  const auto a = h.input(0).to_host(), b = h.input(1).to_host(), c = h.input(2).to_host();
  const auto y = h.forward();
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(a[i] + b[i] + c[i]));
  const auto r = h.check_gradients({}, 1e-2, 1e-2);
  report("add layer (3 inputs)", r);
  CHECK(r.worst_rel_error < 2e-2);
  const auto grads = h.backward(std::vector<float>(static_cast<size_t>(shape.numel()), 2.0f), {}, {true, false, true});
  CHECK(grads[1].empty());
  CHECK(grads[2] == std::vector<float>(static_cast<size_t>(shape.numel()), 2.0f));
}

TEST_CASE("concat joins inputs along the channel dimension", "[concat][layer]") {
  nlohmann::json json = nlohmann::json::object();
  ConfigObject cfg(json, "$.layers[0]");
  auto layer = Concat::from_json("cat", cfg, 3);
  CHECK(layer->num_inputs() == -1);
  CHECK(layer->output_shape({Shape{2, 4, 4, 4, 3}, Shape{2, 4, 4, 4, 5}}) == Shape{2, 4, 4, 4, 8});
  CHECK_THROWS_AS(layer->output_shape({Shape{2, 4, 4, 4, 3}}), ShapeError);
  CHECK_THROWS_WITH(layer->output_shape({Shape{2, 4, 4, 4, 3}, Shape{2, 4, 2, 4, 3}}),
                    Catch::Contains("layer 'cat' (concat)") && Catch::Contains("[2, 4, 2, 4, 3]"));
  CHECK_THROWS_AS(layer->output_shape({Shape{2, 4, 4, 3}, Shape{2, 4, 4, 4, 3}}), ShapeError);

  LayerHarness h(std::move(layer), {Shape{2, 1, 2, 2, 3}, Shape{2, 1, 2, 2, 1}, Shape{2, 1, 2, 2, 2}});
  const auto a = h.input(0).to_host(), b = h.input(1).to_host(), c = h.input(2).to_host();
  const auto y = h.forward();
  REQUIRE(y.size() == 8u * 6u);
  for (size_t row = 0; row < 8; ++row) {
    CHECK(y[row * 6 + 0] == a[row * 3 + 0]);
    CHECK(y[row * 6 + 2] == a[row * 3 + 2]);
    CHECK(y[row * 6 + 3] == b[row]);
    CHECK(y[row * 6 + 4] == c[row * 2 + 0]);
    CHECK(y[row * 6 + 5] == c[row * 2 + 1]);
  }
  const auto r = h.check_gradients({}, 1e-2, 1e-2);
  report("concat layer (3 inputs)", r);
  CHECK(r.worst_rel_error < 2e-2);
}

TEST_CASE("dropout configuration", "[dropout][layer]") {
  nlohmann::json defaults = nlohmann::json::object();
  ConfigObject cfg(defaults, "$.layers[0]");
  CHECK(dynamic_cast<const Dropout&>(*Dropout::from_json("drop", cfg, 0)).rate() == 0.5f);
  nlohmann::json one = {{"rate", 1.0}};
  ConfigObject one_cfg(one, "$.layers[0]");
  CHECK_THROWS_AS(Dropout::from_json("drop", one_cfg, 0), ConfigError);
  nlohmann::json negative = {{"rate", -0.1}};
  ConfigObject negative_cfg(negative, "$.layers[0]");
  CHECK_THROWS_AS(Dropout::from_json("drop", negative_cfg, 0), ConfigError);
}

TEST_CASE("dropout masks are reproducible per step and differ between steps", "[dropout][layer]") {
  const Shape shape{4, 10, 10, 10, 5};
  const float rate = 0.4f;
  LayerHarness h(std::make_unique<Dropout>("drop", rate), {shape}, 42);
  h.input(0).fill(1.0f);
  const auto step3 = h.forward(StepInfo{Mode::training, 3});
  const auto step3_again = h.forward(StepInfo{Mode::training, 3});
  const auto step4 = h.forward(StepInfo{Mode::training, 4});
  CHECK(step3 == step3_again);
  CHECK(step3 != step4);

  size_t kept = 0;
  for (float v : step3) kept += v != 0.0f;
  const double fraction = static_cast<double>(kept) / static_cast<double>(step3.size());
  std::printf("[tolerance] dropout layer: kept fraction %.4f for rate %.1f (expected 0.60 ± 0.01)\n", fraction, rate);
  CHECK(fraction == Approx(1.0 - rate).margin(0.01));
  for (float v : step3) CHECK((v == 0.0f || v == Approx(1.0f / (1.0f - rate))));

  // Another run seed gives another mask; the same seed (a rerun) gives the same one.
  LayerHarness other_seed(std::make_unique<Dropout>("drop", rate), {shape}, 43);
  other_seed.input(0).fill(1.0f);
  CHECK(other_seed.forward(StepInfo{Mode::training, 3}) != step3);
  LayerHarness rerun(std::make_unique<Dropout>("drop", rate), {shape}, 42);
  rerun.input(0).fill(1.0f);
  CHECK(rerun.forward(StepInfo{Mode::training, 3}) == step3);

  // Inference is the identity.
  CHECK(h.forward(StepInfo{Mode::inference, 3}) == h.input(0).to_host());
}

TEST_CASE("dropout backward applies the forward mask", "[dropout][layer][gradient]") {
  const Shape shape{3, 4, 4, 2};
  LayerHarness h(std::make_unique<Dropout>("drop", 0.3f), {shape});
  const StepInfo step{Mode::training, 7};
  h.input(0).fill(1.0f);
  const auto mask = h.forward(step);
  const auto dy = random_vector<float>(static_cast<size_t>(shape.numel()), 5u);
  const auto dx = h.backward(dy, step)[0];
  for (size_t i = 0; i < dx.size(); ++i) CHECK(dx[i] == Approx(dy[i] * mask[i]));
  const auto inference_dx = h.backward(dy, StepInfo{Mode::inference, 7})[0];
  CHECK(inference_dx == dy);

  h.input(0).copy_from_host(random_vector<float>(static_cast<size_t>(shape.numel()), 6u));
  const auto r = h.check_gradients(step, 1e-2, 1e-2);
  report("dropout layer", r);
  CHECK(r.worst_rel_error < 2e-2);
}
