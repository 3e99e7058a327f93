// The batch-norm layer: gradients in training and inference mode, the running statistics,
// and its configuration and shape errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "support/layer_harness.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/batch_norm.hpp"

using tessera::ConfigError;
using tessera::ConfigObject;
using tessera::Shape;
using tessera::ShapeError;
using tessera::layers::BatchNorm;
using tessera::layers::Mode;
using tessera::layers::StepInfo;
using tessera::testing::LayerHarness;
using tessera::testing::random_vector;

namespace {

std::unique_ptr<BatchNorm> make_bn(double momentum = 0.1, double epsilon = 1e-5) {
  return std::make_unique<BatchNorm>("bn", momentum, epsilon);
}

void set_affine(LayerHarness& h, int64_t channels) {
  h.params().at("bn.gamma").value.copy_from_host(random_vector<float>(static_cast<size_t>(channels), 61u, 0.5, 1.5));
  h.params().at("bn.beta").value.copy_from_host(random_vector<float>(static_cast<size_t>(channels), 62u));
}

/// Per-channel mean and biased variance of a channels-last host tensor.
void host_moments(const std::vector<float>& x, int64_t channels, std::vector<double>& mean, std::vector<double>& var) {
  const int64_t rows = static_cast<int64_t>(x.size()) / channels;
  mean.assign(static_cast<size_t>(channels), 0.0);
  var.assign(static_cast<size_t>(channels), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) mean[static_cast<size_t>(c)] += x[static_cast<size_t>(r * channels + c)];
  for (auto& m : mean) m /= static_cast<double>(rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c)
      var[static_cast<size_t>(c)] +=
          std::pow(x[static_cast<size_t>(r * channels + c)] - mean[static_cast<size_t>(c)], 2);
  for (auto& v : var) v /= static_cast<double>(rows);
}

}  // namespace

TEST_CASE("batch norm layer gradients match finite differences in training mode", "[batch_norm][layer][gradient]") {
  for (const Shape& shape : {Shape{8, 3}, Shape{2, 3, 3, 2}, Shape{2, 2, 3, 2, 3}}) {
    LayerHarness h(make_bn(), {shape});
    set_affine(h, shape[shape.rank() - 1]);
    const auto report = h.check_gradients(StepInfo{Mode::training, 0}, 1e-2, 1e-2);
    std::printf("[tolerance] batch_norm layer %s (float, training): max_rel_error %.3g (limit 2e-2) worst %s\n",
                shape.str().c_str(), report.worst_rel_error, report.worst.c_str());
    INFO(shape.str() << ": " << report.worst);
    CHECK(report.worst_rel_error < 2e-2);
  }
}

TEST_CASE("batch norm layer gradients match finite differences in inference mode", "[batch_norm][layer][gradient]") {
  const Shape shape{2, 2, 3, 2, 3};
  LayerHarness h(make_bn(), {shape});
  set_affine(h, 3);
  h.params().at("bn.running_mean").value.copy_from_host({0.2f, -0.1f, 0.4f});
  h.params().at("bn.running_var").value.copy_from_host({0.5f, 1.5f, 2.0f});
  const auto report = h.check_gradients(StepInfo{Mode::inference, 0}, 1e-2, 1e-2);
  std::printf("[tolerance] batch_norm layer %s (float, inference): max_rel_error %.3g (limit 2e-2)\n",
              shape.str().c_str(), report.worst_rel_error);
  INFO(report.worst);
  CHECK(report.worst_rel_error < 2e-2);
}

TEST_CASE("batch norm training normalises with batch statistics and updates running statistics",
          "[batch_norm][layer]") {
  const Shape shape{4, 2, 3, 2};
  const int64_t channels = 2;
  LayerHarness h(make_bn(0.25), {shape});
  h.params().at("bn.gamma").value.copy_from_host({2.0f, 0.5f});
  h.params().at("bn.beta").value.copy_from_host({1.0f, -1.0f});
  std::vector<double> running_mean{0.0, 0.0}, running_var{1.0, 1.0};
  const double n = static_cast<double>(shape.numel() / channels);
  for (int step = 0; step < 2; ++step) {
    h.input(0).copy_from_host(random_vector<float>(static_cast<size_t>(shape.numel()), 70u + step, 1.0, 4.0));
    const auto x = h.input(0).to_host();
    const auto y = h.forward(StepInfo{Mode::training, step});
    std::vector<double> mean, var, y_mean, y_var;
    host_moments(x, channels, mean, var);
    host_moments(y, channels, y_mean, y_var);
    CHECK(y_mean[0] == Approx(1.0).margin(1e-5));
    CHECK(y_mean[1] == Approx(-1.0).margin(1e-5));
    CHECK(std::sqrt(y_var[0]) == Approx(2.0).epsilon(1e-3));
    CHECK(std::sqrt(y_var[1]) == Approx(0.5).epsilon(1e-3));
    // PyTorch's update: the running variance uses the unbiased batch variance.
    for (size_t c = 0; c < 2; ++c) {
      running_mean[c] = 0.75 * running_mean[c] + 0.25 * mean[c];
      running_var[c] = 0.75 * running_var[c] + 0.25 * var[c] * n / (n - 1.0);
    }
    const auto rm = h.params().at("bn.running_mean").value.to_host();
    const auto rv = h.params().at("bn.running_var").value.to_host();
    for (size_t c = 0; c < 2; ++c) {
      CHECK(rm[c] == Approx(running_mean[c]).epsilon(1e-5));
      CHECK(rv[c] == Approx(running_var[c]).epsilon(1e-5));
    }
  }

  // Inference uses the running statistics and leaves them alone.
  const auto x = h.input(0).to_host();
  const auto y = h.forward(StepInfo{Mode::inference, 2});
  const std::vector<double> gamma{2.0, 0.5}, beta{1.0, -1.0};
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = i % 2;
    const double expected = gamma[c] * (x[i] - running_mean[c]) / std::sqrt(running_var[c] + 1e-5) + beta[c];
    CHECK(y[i] == Approx(expected).epsilon(1e-5).margin(1e-5));
  }
  const auto rm = h.params().at("bn.running_mean").value.to_host();
  CHECK(rm[0] == Approx(running_mean[0]).epsilon(1e-6));
}

TEST_CASE("batch norm layer configuration, parameters and shape errors", "[batch_norm][layer]") {
  nlohmann::json defaults = nlohmann::json::object();
  ConfigObject cfg(defaults, "$.layers[0]");
  auto layer = BatchNorm::from_json("bn", cfg, 3);
  auto* bn = dynamic_cast<BatchNorm*>(layer.get());
  REQUIRE(bn != nullptr);
  CHECK(bn->type() == "batch_norm");
  CHECK(bn->momentum() == 0.1);
  CHECK(bn->epsilon() == 1e-5);

  nlohmann::json custom = {{"momentum", 0.01}, {"epsilon", 1e-3}};
  ConfigObject custom_cfg(custom, "$.layers[0]");
  auto tuned = BatchNorm::from_json("bn", custom_cfg, 3);
  CHECK(dynamic_cast<BatchNorm&>(*tuned).momentum() == 0.01);
  CHECK(dynamic_cast<BatchNorm&>(*tuned).epsilon() == 1e-3);
  custom_cfg.finish();

  nlohmann::json bad_momentum = {{"momentum", 1.5}};
  ConfigObject bad_momentum_cfg(bad_momentum, "$.layers[0]");
  CHECK_THROWS_AS(BatchNorm::from_json("bn", bad_momentum_cfg, 3), ConfigError);
  nlohmann::json bad_epsilon = {{"epsilon", 0.0}};
  ConfigObject bad_epsilon_cfg(bad_epsilon, "$.layers[0]");
  CHECK_THROWS_AS(BatchNorm::from_json("bn", bad_epsilon_cfg, 3), ConfigError);

  LayerHarness h(make_bn(), {Shape{2, 4, 4, 4, 5}});
  CHECK(h.layer().backend() == "kokkos");
  CHECK(h.params().at("bn.gamma").trainable);
  CHECK(h.params().at("bn.gamma").value.to_host() == std::vector<float>(5, 1.0f));
  CHECK(h.params().at("bn.beta").value.to_host() == std::vector<float>(5, 0.0f));
  CHECK_FALSE(h.params().at("bn.running_mean").trainable);
  CHECK(h.params().at("bn.running_var").value.to_host() == std::vector<float>(5, 1.0f));

  CHECK_THROWS_AS(make_bn()->output_shape({Shape{2, 3, 4}}), ShapeError);
  CHECK_THROWS_WITH(make_bn()->output_shape({Shape{2, 3, 4}}), Catch::Contains("layer 'bn' (batch_norm)"));

  // One value per channel has no batch variance to train with.
  LayerHarness single(make_bn(), {Shape{1, 3}});
  CHECK_THROWS_AS(single.forward(StepInfo{Mode::training, 0}), ShapeError);
  CHECK_NOTHROW(single.forward(StepInfo{Mode::inference, 0}));
}
