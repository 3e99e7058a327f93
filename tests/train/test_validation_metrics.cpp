#include <unistd.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/scratch_folder.hpp"
#include "tessera/core/error.hpp"
#include "tessera/train/training_run.hpp"
#include "tessera/train/validation_metrics.hpp"

using namespace tessera;
using nlohmann::json;
using train::MetricChoice;
using train::MetricSums;

namespace {

const parallel::Communicator& self() {
  static const parallel::Communicator c = parallel::Communicator::self();
  return c;
}

/// One-hot logits for the predicted classes.
std::vector<float> one_hot(const std::vector<int>& predicted, int classes) {
  std::vector<float> logits(predicted.size() * static_cast<size_t>(classes), 0.0f);
  for (size_t r = 0; r < predicted.size(); ++r) logits[r * static_cast<size_t>(classes) + predicted[r]] = 1.0f;
  return logits;
}

}  // namespace

TEST_CASE("Top-1 and top-5 accuracy count ranks with ties to the first class, as arg-max does", "[train][metrics]") {
  MetricChoice choice;
  choice.accuracy = choice.top5 = true;
  MetricSums sums(choice, 6);
  const std::vector<float> logits{
      0.1f, 0.9f, 0.3f, 0.2f, 0.0f, -1.0f,  // label 1 is the largest: top-1 and top-5
      5.0f, 4.0f, 3.0f, 2.0f, 1.0f, 0.0f,   // label 5 is the smallest of 6: neither
      1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f,   // label 2 is third from the bottom (rank 3): top-5 only
      0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};  // all tied: label 3 ranks behind classes 0-2, top-5 only
  const std::vector<float> labels{1, 5, 2, 3};
  sums.add_classification(logits.data(), labels.data(), 4);
  const auto m = sums.reduce(self());
  CHECK(m.accuracy == Approx(0.25));
  CHECK(m.top5 == Approx(0.75));
  CHECK(m.iou.empty());
  CHECK(m.mae == -1.0);
}

TEST_CASE("IoU and Dice per class, their means and the foreground's match counts by hand", "[train][metrics]") {
  MetricChoice choice;
  choice.iou = choice.dice = true;
  MetricSums sums(choice, 3);
  // predicted 0 1 1 2 0 1, labelled 0 1 2 2 1 1: each class has 1 or 2 voxels in common out of
  // a union of 2 or 4 (IoU 1/2, Dice 2/3); classes 1-2 together: 4 in common of 5.
  const std::vector<float> logits = one_hot({0, 1, 1, 2, 0, 1}, 3);
  const std::vector<float> labels{0, 1, 2, 2, 1, 1};
  // In two parts, as batches come.
  sums.add_classification(logits.data(), labels.data(), 2);
  sums.add_classification(logits.data() + 6, labels.data() + 2, 4);
  const auto m = sums.reduce(self());
  REQUIRE(m.iou.size() == 3);
  REQUIRE(m.dice.size() == 3);
  for (int c = 0; c < 3; ++c) {
    CHECK(m.iou[c] == Approx(0.5));
    CHECK(m.dice[c] == Approx(2.0 / 3.0));
  }
  CHECK(m.mean_iou == Approx(0.5));
  CHECK(m.mean_dice == Approx(2.0 / 3.0));
  CHECK(m.foreground_iou == Approx(0.8));
  CHECK(m.foreground_dice == Approx(8.0 / 9.0));
  CHECK(m.accuracy == -1.0);

  json rec;
  m.add_to(rec);
  CHECK(rec["iou"].size() == 3);
  CHECK(rec["foreground_dice"].get<double>() == Approx(8.0 / 9.0));
  CHECK_FALSE(rec.contains("accuracy"));
  CHECK(m.str() == "IoU mean 0.500 (foreground 0.800), Dice mean 0.667 (foreground 0.889)");
}

TEST_CASE("A class neither predicted nor labelled has no IoU and is left out of the mean", "[train][metrics]") {
  MetricChoice choice;
  choice.iou = true;
  MetricSums sums(choice, 3);
  const std::vector<float> logits = one_hot({0, 0, 1, 1}, 3);
  const std::vector<float> labels{0, 1, 1, 1};
  sums.add_classification(logits.data(), labels.data(), 4);
  const auto m = sums.reduce(self());
  CHECK(m.iou[0] == Approx(0.5));
  CHECK(m.iou[1] == Approx(2.0 / 3.0));
  CHECK(std::isnan(m.iou[2]));
  CHECK(m.mean_iou == Approx((0.5 + 2.0 / 3.0) / 2));
  json rec;
  m.add_to(rec);
  CHECK(rec["iou"][2].is_null());
}

TEST_CASE("MAE and the mean predictor's MAE of a per-sample regression match values by hand", "[train][metrics]") {
  MetricChoice choice;
  choice.mae = true;
  MetricSums sums(choice, 0, 2);
  // Two samples of two targets: errors 1, 0, 2, 0; target means (2.5, 3), deviations 2.5, 1, 2.5, 1.
  const std::vector<float> prediction{1, 2, 3, 4}, target{0, 2, 5, 4};
  sums.add_regression(prediction.data(), target.data(), 2);
  sums.add_regression(prediction.data() + 2, target.data() + 2, 2);
  const auto m = sums.reduce(self());
  CHECK(m.mae == Approx(0.75));
  CHECK(m.baseline_mae == Approx(1.75));
  CHECK(m.str() == "MAE 0.7500 (predicting the mean: 1.7500)");
}

TEST_CASE("Metric names are checked against the list and against the loss", "[train][metrics]") {
  const std::string path = "$.training.metrics";
  CHECK(MetricChoice::from_names({"accuracy", "top5"}, path).names() == std::vector<std::string>{"accuracy", "top5"});
  CHECK_THROWS_WITH(MetricChoice::from_names({"f1"}, path),
                    Catch::Contains("$.training.metrics") && Catch::Contains("unknown metric \"f1\""));
  CHECK_THROWS_WITH(MetricChoice::from_names({"iou", "iou"}, path), Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(MetricChoice::from_names({"mae"}, path).check("softmax_cross_entropy", 2, path),
                    Catch::Contains("\"mae\" does not apply to the loss \"softmax_cross_entropy\""));
  CHECK_THROWS_WITH(MetricChoice::from_names({"iou"}, path).check("mse", 0, path),
                    Catch::Contains("\"iou\" does not apply to the loss \"mse\""));
  // sigmoid_cross_entropy has no validation metric of its own yet: neither list is offered.
  CHECK_THROWS_WITH(MetricChoice::from_names({"mae"}, path).check("sigmoid_cross_entropy", 0, path),
                    Catch::Contains("\"mae\" does not apply to the loss \"sigmoid_cross_entropy\" (none yet"));
  CHECK(MetricChoice::defaults("sigmoid_cross_entropy", true).names().empty());
  CHECK_THROWS_WITH(MetricChoice::from_names({"top5"}, path).check("softmax_cross_entropy", 3, path),
                    Catch::Contains("needs at least 5 classes"));
  CHECK(MetricChoice::defaults("softmax_cross_entropy", false).names() == std::vector<std::string>{"accuracy"});
  CHECK(MetricChoice::defaults("softmax_cross_entropy", true).names() == std::vector<std::string>{"iou", "dice"});
  CHECK(MetricChoice::defaults("mse", false).names() == std::vector<std::string>{"mae"});
}

namespace {

json segmentation_run() {
  return json::parse(R"({
    "model": {"input": {"channels": 1, "size": [8, 8, 8]},
              "layers": [{"type": "conv3d", "filters": 4, "padding": 1}, {"type": "relu"},
                         {"type": "conv3d", "filters": 2, "kernel": 1}]},
    "loss": {"type": "softmax_cross_entropy"},
    "optimizer": {"type": "adam", "lr": 0.01},
    "data": {"source": "synthetic_fields", "task": "segmentation", "samples": 16, "validation_samples": 4,
             "size": 8, "channels": 1},
    "training": {"epochs": 2, "batch_size": 4, "seed": 3}})");
}

train::RunOverrides quiet() {
  train::RunOverrides o;
  o.progress = false;
  return o;
}

}  // namespace

TEST_CASE("A segmentation run reports IoU and Dice by default, and what \"metrics\" chooses", "[train][metrics]") {
  {
    train::TrainingRun run(segmentation_run(), quiet());
    const auto report = run.run();
    const auto& m = report.validation_metrics;
    REQUIRE(m.iou.size() == 2);
    CHECK(m.foreground_iou > 0.0);
    CHECK(m.foreground_iou <= 1.0);
    CHECK(m.mean_dice >= m.mean_iou);  // Dice = 2 IoU / (1 + IoU) ≥ IoU
    CHECK(m.accuracy == -1.0);
    CHECK(report.validation_accuracy >= 0.0);  // the loss's own count stays
  }
  json config = segmentation_run();
  config["training"]["metrics"] = {"accuracy", "iou"};
  // In a scratch folder: a test must not leave files where it is run from.
  const testing::ScratchFolder folder("validation_metrics_test");
  const std::string log = folder / "metrics.jsonl";
  train::RunOverrides o = quiet();
  o.metrics_file = log;
  train::TrainingRun run(config, o);
  const auto report = run.run();
  const auto& m = report.validation_metrics;
  CHECK(m.accuracy == Approx(report.validation_accuracy));  // the same arg-max as the loss
  CHECK(m.iou.size() == 2);
  CHECK(m.dice.empty());
  std::ifstream in(log);
  std::string line, last_validation;
  while (std::getline(in, line))
    if (line.find("\"validation\"") != std::string::npos) last_validation = line;
  const json rec = json::parse(last_validation);
  CHECK(rec["foreground_iou"].get<double>() == Approx(m.foreground_iou));
  CHECK(rec.contains("mean_iou"));
  CHECK_FALSE(rec.contains("dice"));
  std::filesystem::remove(log);
}

TEST_CASE("A metric the loss cannot give is refused naming the key", "[train][metrics]") {
  json config = segmentation_run();
  config["training"]["metrics"] = {"mae"};
  CHECK_THROWS_WITH(train::TrainingRun(config, quiet()),
                    Catch::Contains("$.training.metrics") && Catch::Contains("does not apply"));
  config["training"]["metrics"] = {"precision"};
  CHECK_THROWS_WITH(train::TrainingRun(config, quiet()), Catch::Contains("unknown metric \"precision\""));
}
