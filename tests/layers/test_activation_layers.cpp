// The activation layers ("relu", "leaky_relu", "elu", "tanh", "scale"): configuration, values and gradients.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "support/layer_harness.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/activation.hpp"

using tessera::ConfigError;
using tessera::ConfigObject;
using tessera::Shape;
using tessera::layers::Activation;
using tessera::layers::Layer;
using tessera::ops::EltwiseKind;
using tessera::testing::LayerHarness;
using tessera::testing::random_vector;

namespace {

std::unique_ptr<Layer> from_json(const std::string& type, const nlohmann::json& json) {
  ConfigObject cfg(json, "$.layers[0]");
  std::unique_ptr<Layer> layer;
  if (type == "relu") layer = Activation::from_json<EltwiseKind::relu>("act", cfg, 3);
  if (type == "leaky_relu") layer = Activation::from_json<EltwiseKind::leaky_relu>("act", cfg, 3);
  if (type == "elu") layer = Activation::from_json<EltwiseKind::elu>("act", cfg, 3);
  if (type == "tanh") layer = Activation::from_json<EltwiseKind::tanh>("act", cfg, 3);
  if (type == "scale") layer = Activation::from_json<EltwiseKind::scale>("act", cfg, 3);
  cfg.finish();
  return layer;
}

/// Inputs in [-2, 2] with |x| >= 0.1, so a finite-difference step of 1e-2 never crosses the kink.
std::vector<float> inputs_away_from_zero(size_t n) {
  auto x = random_vector<float>(n, 81u, -2.0, 2.0);
  for (auto& v : x)
    if (std::abs(v) < 0.1f) v = v < 0 ? v - 0.1f : v + 0.1f;
  return x;
}

}  // namespace

TEST_CASE("activation layers read their alpha and compute their function", "[activation][layer]") {
  const struct {
    const char* type;
    nlohmann::json json;
    float alpha;
  } cases[] = {{"relu", nlohmann::json::object(), 0.0f},  {"leaky_relu", nlohmann::json::object(), 0.01f},
               {"leaky_relu", {{"alpha", 0.2}}, 0.2f},    {"elu", nlohmann::json::object(), 1.0f},
               {"elu", {{"alpha", 0.5}}, 0.5f},           {"tanh", nlohmann::json::object(), 0.0f},
               {"scale", nlohmann::json::object(), 1.0f}, {"scale", {{"factor", 1.2}}, 1.2f}};
  for (const auto& c : cases) {
    auto layer = from_json(c.type, c.json);
    const auto& act = dynamic_cast<const Activation&>(*layer);
    CHECK(act.type() == c.type);
    CHECK(act.desc().alpha == c.alpha);

    const Shape shape{2, 3, 3, 3, 2};
    LayerHarness h(std::move(layer), {shape});
    CHECK(h.layer().backend() == "kokkos");
    CHECK(h.layer().output_shape({shape}) == shape);
    const auto x = inputs_away_from_zero(static_cast<size_t>(shape.numel()));
    h.input(0).copy_from_host(x);
    const auto y = h.forward();
    double worst = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const std::string kind = c.type;
      double expected = v;
      if (kind == "tanh") {
        expected = std::tanh(v);
      } else if (kind == "scale") {
        expected = c.alpha * v;
      } else if (v <= 0) {
        const std::string type = c.type;
        expected = type == "relu" ? 0.0 : type == "leaky_relu" ? c.alpha * v : c.alpha * (std::exp(v) - 1.0);
      }
      worst = std::max(worst, std::abs(y[i] - expected));
    }
    INFO(c.type << " alpha " << c.alpha);
    CHECK(worst < 1e-6);

    const auto report = h.check_gradients({}, 1e-2, 1e-2);
    std::printf("[tolerance] %s(alpha=%g) layer (float): max_rel_error %.3g (limit 2e-2)\n", c.type, c.alpha,
                report.worst_rel_error);
    INFO(report.worst);
    CHECK(report.worst_rel_error < 2e-2);
  }
}

TEST_CASE("activation layers reject keys they do not have and bad alphas", "[activation][layer]") {
  CHECK_THROWS_AS(from_json("relu", {{"alpha", 0.1}}), ConfigError);
  CHECK_THROWS_AS(from_json("leaky_relu", {{"alpha", -0.1}}), ConfigError);
  CHECK_THROWS_AS(from_json("elu", {{"alpha", "big"}}), ConfigError);
  CHECK_THROWS_AS(from_json("tanh", {{"alpha", 0.1}}), ConfigError);
  CHECK_THROWS_AS(from_json("scale", {{"factor", "twice"}}), ConfigError);
}

TEST_CASE("activation backward skips an input whose gradient is not wanted", "[activation][layer]") {
  LayerHarness h(from_json("relu", nlohmann::json::object()), {Shape{4, 3}});
  h.forward();
  const auto grads = h.backward(std::vector<float>(12, 1.0f), {}, {false});
  CHECK(grads[0].empty());
}
