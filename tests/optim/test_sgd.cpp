// SGD against torch.optim.SGD's update rule, recomputed here on host in double.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "support/optimizer_check.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/optim/sgd.hpp"

using namespace tessera;
using tessera::optim::Sgd;
using tessera::optim::SgdOptions;
using tessera::testing::config_error;

namespace {

constexpr int64_t numel = testing::optimizer_numel;
constexpr double tolerance = 1e-6;

std::vector<float> random_vector(uint64_t stream, float scale) { return testing::optimizer_vector(2024, stream, scale); }

// A schedule-like learning rate that changes every step, so a step that ignored its argument shows.
float lr_at(int step) { return static_cast<float>(0.05 * (1.0 - 0.1 * step)); }

/// torch.optim.SGD on one flat parameter, in double.
std::vector<double> reference_sgd(const SgdOptions& o, const std::vector<float>& p0,
                                  const std::vector<std::vector<float>>& grads) {
  std::vector<double> p(p0.begin(), p0.end()), buf(p0.size(), 0.0);
  for (size_t s = 0; s < grads.size(); ++s) {
    const double lr = lr_at(static_cast<int>(s));
    for (size_t i = 0; i < p.size(); ++i) {
      double d = grads[s][i] + o.weight_decay * p[i];
      if (o.momentum > 0.0) {
        buf[i] = s == 0 ? d : o.momentum * buf[i] + (1.0 - o.dampening) * d;
        d = o.nesterov ? d + o.momentum * buf[i] : buf[i];
      }
      p[i] -= lr * d;
    }
  }
  return p;
}

void check_against_reference(const std::string& what, const SgdOptions& o) {
  Sgd optimizer(o);
  testing::check_against_reference(
      "sgd " + what, optimizer,
      [&](const std::vector<float>& p0, const std::vector<std::vector<float>>& grads) { return reference_sgd(o, p0, grads); },
      2024, lr_at, tolerance);
}

}  // namespace

TEST_CASE("sgd without momentum matches the reference update", "[optim][sgd]") {
  SgdOptions o;
  o.lr = 0.05;
  check_against_reference("plain", o);
}

TEST_CASE("sgd with momentum matches the reference update", "[optim][sgd]") {
  SgdOptions o;
  o.lr = 0.05;
  o.momentum = 0.9;
  check_against_reference("momentum", o);
}

TEST_CASE("sgd with nesterov momentum matches the reference update", "[optim][sgd]") {
  SgdOptions o;
  o.lr = 0.05;
  o.momentum = 0.9;
  o.nesterov = true;
  check_against_reference("nesterov", o);
}

TEST_CASE("sgd with weight decay matches the reference update", "[optim][sgd]") {
  SgdOptions o;
  o.lr = 0.05;
  o.weight_decay = 0.01;
  check_against_reference("weight_decay", o);
  o.momentum = 0.8;
  o.nesterov = true;
  check_against_reference("weight_decay+nesterov", o);
}

TEST_CASE("sgd with dampening matches the reference update", "[optim][sgd]") {
  SgdOptions o;
  o.lr = 0.05;
  o.momentum = 0.9;
  o.dampening = 0.5;
  check_against_reference("dampening", o);
}

TEST_CASE("sgd momentum starts at the first gradient, undamped", "[optim][sgd]") {
  SgdOptions o;
  o.lr = 0.5;
  o.momentum = 0.9;
  o.dampening = 0.5;
  Tensor values(Shape{4}), grads(Shape{4});
  values.copy_from_host({1.0f, 2.0f, 3.0f, 4.0f});
  grads.copy_from_host({0.5f, -1.0f, 2.0f, 0.0f});
  Sgd sgd(o);
  sgd.bind(values, grads);
  sgd.step(0.5f);
  // buf = g (not (1 − dampening)·g, not momentum·0 + g·(1 − dampening)), p −= lr·buf.
  CHECK(sgd.state().at(0).second.to_host() == std::vector<float>{0.5f, -1.0f, 2.0f, 0.0f});
  CHECK(values.to_host() == std::vector<float>{0.75f, 2.5f, 2.0f, 4.0f});
  grads.copy_from_host({1.0f, 1.0f, 1.0f, 1.0f});
  sgd.step(0.5f);
  // buf = 0.9·buf + 0.5·g.
  const std::vector<float> buf = sgd.state().at(0).second.to_host();
  const std::vector<float> want = {0.95f, -0.4f, 2.3f, 0.5f};
  for (size_t i = 0; i < 4; ++i) CHECK(buf[i] == Approx(want[i]).epsilon(1e-6));
}

TEST_CASE("sgd state restored from a copy continues identically", "[optim][sgd]") {
  SgdOptions o;
  o.lr = 0.05;
  o.momentum = 0.9;
  o.nesterov = true;
  o.weight_decay = 1e-3;
  Tensor values(Shape{numel}), grads(Shape{numel});
  values.copy_from_host(random_vector(1, 1.0f));
  Sgd a(o);
  a.bind(values, grads);
  for (int s = 0; s < 3; ++s) {
    grads.copy_from_host(random_vector(200 + static_cast<uint64_t>(s), 1.0f));
    a.step(0.05f);
  }
  // Checkpoint: parameters, named state and the step counter.
  const auto saved_values = values.to_host();
  const auto state = a.state();
  REQUIRE(state.size() == 1);
  CHECK(state[0].first == "sgd.momentum");
  const Tensor saved_momentum = state[0].second.clone();
  const int64_t saved_steps = a.steps();

  for (int s = 3; s < 6; ++s) {
    grads.copy_from_host(random_vector(200 + static_cast<uint64_t>(s), 1.0f));
    a.step(0.05f);
  }

  Tensor restored(Shape{numel}), restored_grads(Shape{numel});
  restored.copy_from_host(saved_values);
  Sgd b(o);
  b.bind(restored, restored_grads);
  deep_copy(b.state().at(0).second, saved_momentum);
  b.set_steps(saved_steps);
  for (int s = 3; s < 6; ++s) {
    restored_grads.copy_from_host(random_vector(200 + static_cast<uint64_t>(s), 1.0f));
    b.step(0.05f);
  }
  CHECK(b.steps() == a.steps());
  CHECK(restored.to_host() == values.to_host());
  CHECK(b.state().at(0).second.to_host() == a.state().at(0).second.to_host());
}

TEST_CASE("sgd without momentum has no state", "[optim][sgd]") {
  SgdOptions o;
  o.lr = 0.1;
  Sgd sgd(o);
  Tensor values(Shape{8}), grads(Shape{8});
  sgd.bind(values, grads);
  CHECK(sgd.state().empty());
}

TEST_CASE("sgd binds only equal-sized buffers and steps only when bound", "[optim][sgd]") {
  SgdOptions o;
  o.lr = 0.1;
  Sgd sgd(o);
  CHECK_THROWS_AS(sgd.step(0.1f), Error);
  CHECK_THROWS_AS(sgd.bind(Tensor(Shape{8}), Tensor(Shape{9})), ShapeError);
  // A model without trainable parameters binds two empty tensors; a step is then a no-op.
  sgd.bind(Tensor(), Tensor());
  sgd.step(0.1f);
  CHECK(sgd.steps() == 1);
}

TEST_CASE("sgd reads its configuration", "[optim][sgd][config]") {
  const nlohmann::json j = {{"type", "sgd"}, {"lr", 0.001}, {"momentum", 0.9}};
  ConfigObject cfg(j, "$.optimizer");
  const auto opt = optim::Optimizer::from_json(cfg);
  CHECK(opt->type() == "sgd");
  CHECK(opt->base_lr() == 0.001);
  CHECK(opt->str() == "sgd lr=0.001 momentum=0.9 nesterov=false weight_decay=0");

  const nlohmann::json full = {{"type", "sgd"},     {"lr", 0.1},         {"momentum", 0.5},
                               {"nesterov", false}, {"dampening", 0.25}, {"weight_decay", 1e-4}};
  ConfigObject cfg_full(full, "$.optimizer");
  const auto sgd = optim::Optimizer::from_json(cfg_full);
  CHECK(sgd->str() == "sgd lr=0.1 momentum=0.5 nesterov=false weight_decay=0.0001 dampening=0.25");
}

TEST_CASE("sgd configuration errors name the JSON path", "[optim][sgd][config]") {
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", -0.1}}),
             Catch::Contains("$.optimizer.lr:") && Catch::Contains("positive"));
  CHECK_THAT(config_error({{"type", "sgd"}}), Catch::Contains("$.optimizer.lr: required key is missing"));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", 0.1}, {"nesterov", true}}),
             Catch::Contains("$.optimizer.nesterov:") && Catch::Contains("momentum > 0"));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", 0.1}, {"momentum", 0.9}, {"nesterov", true}, {"dampening", 0.1}}),
             Catch::Contains("$.optimizer.nesterov:") && Catch::Contains("dampening"));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", 0.1}, {"momentum", 1.0}}), Catch::Contains("$.optimizer.momentum:"));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", 0.1}, {"weight_decay", -1.0}}),
             Catch::Contains("$.optimizer.weight_decay:"));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", 0.1}, {"momentun", 0.9}}),
             Catch::Contains("$.optimizer.momentun: unknown key"));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", "0.1"}}), Catch::Contains("$.optimizer.lr: expected a number"));
  CHECK_THAT(config_error({{"type", "rmsprop"}, {"lr", 0.1}}),
             Catch::Contains("$.optimizer.type:") && Catch::Contains("rmsprop"));
  CHECK_THAT(config_error({{"lr", 0.1}}), Catch::Contains("$.optimizer.type: required key is missing"));
}
