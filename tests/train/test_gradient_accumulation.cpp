// Gradient accumulation: K micro-batches of b samples per optimizer step train as one batch of
// K·b samples does (a model without batch norm, whose statistics follow each micro-batch), the
// learning-rate scaling sees the K·b samples of a step, and bad settings are refused by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

json run_config(const json& optimizer, int64_t batch, int64_t accumulate) {
  json c = json::parse(R"({
    "model": {"input": {"channels": 2, "size": [6, 6, 6]},
              "layers": [{"name": "c", "type": "conv3d", "filters": 4, "padding": 1},
                         {"type": "relu"}, {"type": "max_pool3d"},
                         {"type": "flatten"}, {"name": "d", "type": "dense", "units": 4}]},
    "loss": {"type": "mse"},
    "data": {"source": "synthetic_fields", "samples": 24, "validation_samples": 0, "size": 6, "channels": 2},
    "training": {"epochs": 2, "seed": 5, "log_every": 1}})");
  c["optimizer"] = optimizer;
  c["training"]["batch_size"] = batch;
  c["training"]["accumulate"] = accumulate;
  return c;
}

train::RunOverrides quiet() {
  train::RunOverrides o;
  o.progress = false;
  return o;
}

struct Trained {
  train::TrainingReport report;
  std::vector<float> weights;
};

Trained train_with(const json& config) {
  train::TrainingRun run(config, quiet());
  Trained t{run.run(), run.model().parameters().values().to_host()};
  return t;
}

}  // namespace

TEST_CASE("K accumulated micro-batches train as one K times larger batch", "[train][accumulate]") {
  for (const json& optimizer :
       {json{{"type", "sgd"}, {"lr", 0.01}, {"momentum", 0.9}},
        json{{"type", "lamb"}, {"lr", 0.01}},
        json{{"type", "lars"}, {"lr", 1.0}, {"trust_coefficient", 0.01}, {"weight_decay", 1e-4}}}) {
    INFO(optimizer.dump());
    const Trained whole = train_with(run_config(optimizer, 8, 1));
    REQUIRE(whole.report.steps == 6);
    for (const auto& [batch, k] : std::vector<std::pair<int64_t, int64_t>>{{4, 2}, {2, 4}, {1, 8}}) {
      INFO("micro-batch " << batch << " x " << k);
      const Trained accumulated = train_with(run_config(optimizer, batch, k));
      REQUIRE(accumulated.report.steps == 6);
      for (size_t s = 0; s < 6; ++s)
        CHECK(accumulated.report.step_losses[s] == Approx(whole.report.step_losses[s]).epsilon(1e-5));
      double diff = 0, scale = 0;
      for (size_t i = 0; i < whole.weights.size(); ++i) {
        diff = std::max(diff, static_cast<double>(std::abs(accumulated.weights[i] - whole.weights[i])));
        scale = std::max(scale, static_cast<double>(std::abs(whole.weights[i])));
      }
      CHECK(diff < 1e-5 * scale);
    }
  }
}

TEST_CASE("learning-rate scaling takes the samples of a whole accumulated step", "[train][accumulate]") {
  // Micro-batches of 2, accumulated 4 times: a step of 8 samples, twice the reference batch of 4.
  const auto scaled = train_with(run_config(
      {{"type", "sgd"}, {"lr", 0.01}, {"momentum", 0.9}, {"lr_scaling", {{"reference_batch", 4}}}}, 2, 4));
  const auto written = train_with(run_config({{"type", "sgd"}, {"lr", 0.02}, {"momentum", 0.9}}, 2, 4));
  CHECK(scaled.report.step_losses == written.report.step_losses);
}

TEST_CASE("bad accumulation settings are refused naming the key", "[train][accumulate]") {
  const json sgd = {{"type", "sgd"}, {"lr", 0.01}};
  CHECK_THROWS_WITH(train::TrainingRun(run_config(sgd, 4, 0), quiet()),
                    Catch::Contains("$.training.accumulate: expected an integer from 1 to "));
  CHECK_THROWS_WITH(train::TrainingRun(run_config(sgd, 4, 7), quiet()),
                    Catch::Contains("$.training.accumulate") && Catch::Contains("make a step of 28 samples") &&
                        Catch::Contains("24 training samples"));
  auto o = quiet();
  o.accumulate = 0;
  CHECK_THROWS_WITH(train::TrainingRun(run_config(sgd, 4, 1), o), Catch::Contains("--accumulate"));
}
