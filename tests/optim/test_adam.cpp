// Adam and AdamW against torch.optim.Adam / AdamW's update rule, recomputed here on host in double.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "support/optimizer_check.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/optim/adam.hpp"

using namespace tessera;
using tessera::optim::Adam;
using tessera::optim::AdamOptions;
using tessera::testing::config_error;

namespace {

constexpr int64_t numel = testing::optimizer_numel;
constexpr double tolerance = 1e-6;

std::vector<float> random_vector(uint64_t stream, float scale) { return testing::optimizer_vector(77, stream, scale); }

float lr_at(int step) { return static_cast<float>(0.01 * (1.0 - 0.1 * step)); }

/// torch.optim.Adam (decoupled: torch.optim.AdamW) on one flat parameter, in double.
std::vector<double> reference_adam(const AdamOptions& o, const std::vector<float>& p0,
                                   const std::vector<std::vector<float>>& grads) {
  std::vector<double> p(p0.begin(), p0.end()), m(p0.size(), 0.0), v(p0.size(), 0.0);
  for (size_t s = 0; s < grads.size(); ++s) {
    const double lr = lr_at(static_cast<int>(s));
    const double t = static_cast<double>(s + 1);
    const double bias_correction1 = 1.0 - std::pow(o.beta1, t);
    const double bias_correction2 = 1.0 - std::pow(o.beta2, t);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = grads[s][i];
      if (o.decoupled_weight_decay)
        p[i] *= 1.0 - lr * o.weight_decay;
      else
        g += o.weight_decay * p[i];
      m[i] = o.beta1 * m[i] + (1.0 - o.beta1) * g;
      v[i] = o.beta2 * v[i] + (1.0 - o.beta2) * g * g;
      const double m_hat = m[i] / bias_correction1;
      const double v_hat = v[i] / bias_correction2;
      p[i] -= lr * m_hat / (std::sqrt(v_hat) + o.epsilon);
    }
  }
  return p;
}

void check_against_reference(const std::string& what, const AdamOptions& o) {
  Adam optimizer(o);
  testing::check_against_reference(
      "adam " + what, optimizer,
      [&](const std::vector<float>& p0, const std::vector<std::vector<float>>& grads) { return reference_adam(o, p0, grads); },
      77, lr_at, tolerance);
}

}  // namespace

TEST_CASE("adam matches the reference update", "[optim][adam]") {
  check_against_reference("defaults", AdamOptions{});
  AdamOptions o;
  o.beta1 = 0.5;
  o.beta2 = 0.9;
  o.epsilon = 1e-3;
  check_against_reference("beta1=0.5 beta2=0.9 epsilon=1e-3", o);
}

TEST_CASE("adam with L2 weight decay matches the reference update", "[optim][adam]") {
  AdamOptions o;
  o.weight_decay = 0.1;
  check_against_reference("weight_decay", o);
}

TEST_CASE("adamw (decoupled weight decay) matches the reference update", "[optim][adam]") {
  AdamOptions o;
  o.weight_decay = 0.1;
  o.decoupled_weight_decay = true;
  check_against_reference("adamw", o);
}

TEST_CASE("adam's first step moves every parameter by about lr against its gradient", "[optim][adam]") {
  // With m and v from one gradient, the bias-corrected ratio is g / |g|.
  Tensor values(Shape{3}), grads(Shape{3});
  values.copy_from_host({1.0f, 1.0f, 1.0f});
  grads.copy_from_host({4.0f, -0.25f, 1e-3f});
  Adam adam(AdamOptions{});
  adam.bind(values, grads);
  adam.step(0.01f);
  const auto p = values.to_host();
  CHECK(p[0] == Approx(0.99).epsilon(1e-6));
  CHECK(p[1] == Approx(1.01).epsilon(1e-6));
  CHECK(p[2] == Approx(0.99).epsilon(1e-5));
}

TEST_CASE("adam state restored from a copy continues identically", "[optim][adam]") {
  AdamOptions o;
  o.weight_decay = 0.01;
  o.decoupled_weight_decay = true;
  Tensor values(Shape{numel}), grads(Shape{numel});
  values.copy_from_host(random_vector(1, 1.0f));
  Adam a(o);
  a.bind(values, grads);
  for (int s = 0; s < 3; ++s) {
    grads.copy_from_host(random_vector(300 + static_cast<uint64_t>(s), 1.0f));
    a.step(0.01f);
  }
  const auto saved_values = values.to_host();
  std::vector<std::pair<std::string, Tensor>> saved;
  for (const auto& [name, tensor] : a.state()) saved.emplace_back(name, tensor.clone());
  REQUIRE(saved.size() == 2);
  CHECK(saved[0].first == "adam.m");
  CHECK(saved[1].first == "adam.v");
  const int64_t saved_steps = a.steps();
  CHECK(saved_steps == 3);

  for (int s = 3; s < 6; ++s) {
    grads.copy_from_host(random_vector(300 + static_cast<uint64_t>(s), 1.0f));
    a.step(0.01f);
  }

  auto resume = [&](bool restore_steps) {
    Tensor restored(Shape{numel}), restored_grads(Shape{numel});
    restored.copy_from_host(saved_values);
    Adam b(o);
    b.bind(restored, restored_grads);
    const auto state = b.state();
    for (size_t k = 0; k < state.size(); ++k) deep_copy(state[k].second, saved[k].second);
    if (restore_steps) b.set_steps(saved_steps);
    for (int s = 3; s < 6; ++s) {
      restored_grads.copy_from_host(random_vector(300 + static_cast<uint64_t>(s), 1.0f));
      b.step(0.01f);
    }
    return restored.to_host();
  };
  CHECK(resume(true) == values.to_host());
  // The step counter is part of the state: bias correction restarts without it.
  CHECK(resume(false) != values.to_host());
}

TEST_CASE("adam reads its configuration", "[optim][adam][config]") {
  const nlohmann::json defaults = {{"type", "adam"}};
  ConfigObject cfg(defaults, "$.optimizer");
  const auto adam = optim::Optimizer::from_json(cfg);
  CHECK(adam->type() == "adam");
  CHECK(adam->base_lr() == 1e-3);
  CHECK(adam->str() == "adam lr=0.001 beta1=0.9 beta2=0.999 epsilon=1e-08 weight_decay=0 decoupled_weight_decay=false");

  const nlohmann::json adamw = {{"type", "adam"},
                                {"lr", 3e-4},
                                {"beta1", 0.8},
                                {"beta2", 0.99},
                                {"epsilon", 1e-6},
                                {"weight_decay", 0.05},
                                {"decoupled_weight_decay", true}};
  ConfigObject cfg_w(adamw, "$.optimizer");
  CHECK(optim::Optimizer::from_json(cfg_w)->str() ==
        "adam lr=0.0003 beta1=0.8 beta2=0.99 epsilon=1e-06 weight_decay=0.05 decoupled_weight_decay=true");
}

TEST_CASE("adam configuration errors name the JSON path", "[optim][adam][config]") {
  CHECK_THAT(config_error({{"type", "adam"}, {"lr", -1e-3}}),
             Catch::Contains("$.optimizer.lr:") && Catch::Contains("positive"));
  CHECK_THAT(config_error({{"type", "adam"}, {"beta1", 1.0}}), Catch::Contains("$.optimizer.beta1:"));
  CHECK_THAT(config_error({{"type", "adam"}, {"beta2", -0.1}}), Catch::Contains("$.optimizer.beta2:"));
  CHECK_THAT(config_error({{"type", "adam"}, {"epsilon", -1e-8}}), Catch::Contains("$.optimizer.epsilon:"));
  CHECK_THAT(config_error({{"type", "adam"}, {"weight_decay", -0.1}}), Catch::Contains("$.optimizer.weight_decay:"));
  CHECK_THAT(config_error({{"type", "adam"}, {"momentum", 0.9}}), Catch::Contains("$.optimizer.momentum: unknown key"));
  CHECK_THAT(config_error({{"type", "adam"}, {"decoupled_weight_decay", 1}}),
             Catch::Contains("$.optimizer.decoupled_weight_decay: expected true or false"));
  CHECK_THAT(config_error({{"type", "adamw"}}), Catch::Contains("$.optimizer.type:") && Catch::Contains("adamw"));
}
