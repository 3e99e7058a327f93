#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tessera/core/stop_request.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

json small_run() {
  return json::parse(R"({
    "model": {"input": {"channels": 2, "size": [6, 6, 6]},
              "layers": [{"name": "c", "type": "conv3d", "filters": 4, "padding": 1},
                         {"type": "relu"}, {"type": "max_pool3d"},
                         {"type": "flatten"}, {"name": "d", "type": "dense", "units": 4}]},
    "loss": {"type": "mse"},
    "optimizer": {"type": "adam", "lr": 0.01},
    "data": {"source": "synthetic_fields", "samples": 24, "validation_samples": 8, "size": 6, "channels": 2},
    "training": {"epochs": 3, "batch_size": 4, "seed": 9, "log_every": 4}})");
}

/// Requests a stop (as the signal handler would) before step `at` starts, and records the
/// steps it sees end.
class StopBefore final : public train::TrainerHook {
 public:
  explicit StopBefore(int64_t at) : at_(at) {}
  void on_step_start(train::Trainer&, int64_t step) override {
    if (step == at_) request_stop(SIGTERM);
  }
  void on_step_end(train::Trainer&, const train::StepEnd& s) override { ends.push_back(s); }
  std::vector<train::StepEnd> ends;

 private:
  int64_t at_;
};

train::RunOverrides overrides(const std::string& checkpoint, const std::string& metrics) {
  train::RunOverrides o;
  o.progress = false;
  o.checkpoint_file = checkpoint;
  o.metrics_file = metrics;
  return o;
}

std::vector<json> records(const std::string& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("A stop request ends the run after the current step, with a checkpoint and an end record",
          "[train][signals]") {
  clear_stop_request();
  const std::string ckpt = "tessera_stop_run.ckpt", metrics = "tessera_stop_run.jsonl";
  train::TrainingRun run(small_run(), overrides(ckpt, metrics));
  auto hook = std::make_unique<StopBefore>(4);
  auto* stopper = hook.get();
  run.trainer().add_hook(std::move(hook));
  const auto report = run.run();
  clear_stop_request();

  CHECK(report.stop_signal == SIGTERM);
  CHECK(report.steps == 5);  // step 5 (0-based 4) was under way: it is finished
  REQUIRE(stopper->ends.size() == 5);
  CHECK(stopper->ends.back().stop_signal == SIGTERM);
  CHECK(stopper->ends.back().window_end);  // the steps since the last logged loss are logged
  for (size_t i = 0; i + 1 < stopper->ends.size(); ++i) CHECK(stopper->ends[i].stop_signal == 0);

  const auto log = records(metrics);
  REQUIRE_FALSE(log.empty());
  CHECK(log.back()["event"] == "end");
  CHECK(log.back()["steps"] == 5);
  CHECK(log.back()["stopped_by"] == "SIGTERM");
  for (const auto& r : log) CHECK(r["event"] != "validation");  // the stop skips validation

  // The checkpoint holds step 5, and a run resumed from it takes the steps an uninterrupted
  // run takes, with the same losses.
  auto resumed_options = overrides("", "");
  resumed_options.resume_file = ckpt;
  resumed_options.max_steps = 9;
  train::TrainingRun resumed(small_run(), resumed_options);
  const auto after = resumed.run();
  auto whole_options = overrides("", "");
  whole_options.max_steps = 9;
  train::TrainingRun whole(small_run(), whole_options);
  const auto reference = whole.run();
  REQUIRE(after.step_losses.size() == 4);
  REQUIRE(reference.step_losses.size() == 9);
  for (size_t i = 0; i < 5; ++i) CHECK(report.step_losses[i] == Approx(reference.step_losses[i]).epsilon(1e-6));
  for (size_t i = 0; i < 4; ++i) CHECK(after.step_losses[i] == Approx(reference.step_losses[5 + i]).epsilon(1e-6));
  CHECK(after.stop_signal == 0);
  std::remove(ckpt.c_str());
  std::remove(metrics.c_str());
}

TEST_CASE("A stop request during the last step lets the run finish normally", "[train][signals]") {
  clear_stop_request();
  auto o = overrides("", "");
  o.max_steps = 3;
  train::TrainingRun run(small_run(), o);
  run.trainer().add_hook(std::make_unique<StopBefore>(2));
  const auto report = run.run();
  clear_stop_request();
  CHECK(report.steps == 3);
  CHECK(report.stop_signal == 0);
  CHECK(report.validation_loss >= 0);  // the last step validated as usual
}
