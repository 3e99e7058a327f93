#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tessera/train/training_run.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

json small_run(int64_t validation_samples) {
  return json::parse(R"({
    "model": {"input": {"channels": 2, "size": [6, 6, 6]},
              "layers": [{"name": "c", "type": "conv3d", "filters": 4, "padding": 1},
                         {"type": "relu"}, {"type": "max_pool3d"},
                         {"type": "flatten"}, {"name": "d", "type": "dense", "units": 4}]},
    "loss": {"type": "mse"},
    "optimizer": {"type": "sgd", "lr": 0.01},
    "data": {"source": "synthetic_fields", "samples": 24, "validation_samples": )" +
                     std::to_string(validation_samples) + R"(, "size": 6, "channels": 2},
    "training": {"epochs": 3, "batch_size": 4, "seed": 9, "log_every": 4}})");
}

/// Writes down every call it gets, and what the trainer shows it at that point.
class RecordingHook final : public train::TrainerHook {
 public:
  explicit RecordingHook(std::vector<std::string>& log) : log_(log) {}
  void on_run_start(train::Trainer&, const train::RunStart& s) override {
    log_.push_back("start " + std::to_string(s.start_step) + "-" + std::to_string(s.last_step));
  }
  void on_step_start(train::Trainer&, int64_t step) override { log_.push_back("before " + std::to_string(step)); }
  void on_step_end(train::Trainer& trainer, const train::StepEnd& s) override {
    std::string line = "after " + std::to_string(s.step) + " epoch " + std::to_string(s.epoch);
    if (s.epoch_end) line += " epoch_end";
    if (s.window_end) line += " window";
    log_.push_back(line);
    CHECK(trainer.report().step_losses.size() == static_cast<size_t>(s.step));
    CHECK(trainer.report().step_losses.back() == s.loss);
    if (s.window_end) CHECK(trainer.report().logged_losses.back() == s.window_loss);
  }
  void on_training_end(train::Trainer&, int64_t steps) override { log_.push_back("trained " + std::to_string(steps)); }
  void on_run_end(train::Trainer& trainer, const train::RunEnd& e) override {
    log_.push_back("end " + std::to_string(e.steps));
    CHECK(trainer.report().steps == e.steps);
  }

 private:
  std::vector<std::string>& log_;
};

train::RunOverrides quiet(int64_t max_steps) {
  train::RunOverrides o;
  o.progress = false;
  o.max_steps = max_steps;
  return o;
}

}  // namespace

TEST_CASE("An added hook is called around the run and every step, in order", "[train][hooks]") {
  train::TrainingRun run(small_run(0), quiet(8));
  std::vector<std::string> log;
  run.trainer().add_hook(std::make_unique<RecordingHook>(log));
  run.run();
  const std::vector<std::string> expected{"start 0-8",
                                          "before 0",
                                          "after 1 epoch 0",
                                          "before 1",
                                          "after 2 epoch 0",
                                          "before 2",
                                          "after 3 epoch 0",
                                          "before 3",
                                          "after 4 epoch 0 window",
                                          "before 4",
                                          "after 5 epoch 0",
                                          "before 5",
                                          "after 6 epoch 0 epoch_end window",
                                          "before 6",
                                          "after 7 epoch 1",
                                          "before 7",
                                          "after 8 epoch 1 window",
                                          "trained 8",
                                          "end 8"};
  CHECK(log == expected);
}

TEST_CASE("A hook sees validation results in the report and can validate itself", "[train][hooks]") {
  struct Validating final : train::TrainerHook {
    std::vector<double> seen, own;
    void on_step_end(train::Trainer& trainer, const train::StepEnd& s) override {
      if (!s.epoch_end) return;
      seen.push_back(trainer.report().validation_loss);  // the standard validation ran before
      own.push_back(trainer.validate().loss);
    }
  };
  train::TrainingRun run(small_run(8), quiet(12));
  auto hook = std::make_unique<Validating>();
  auto* validating = hook.get();
  run.trainer().add_hook(std::move(hook));
  const auto report = run.run();
  REQUIRE(validating->seen.size() == 2);
  CHECK(validating->seen == validating->own);  // evaluation is repeatable
  CHECK(report.validation_loss == validating->seen.back());
}
