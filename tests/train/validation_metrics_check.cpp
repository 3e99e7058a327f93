// Run under mpirun with 2 ranks: validation metrics of a model split over the ranks (by samples,
// in depth, and in depth with per-sample outputs kept on every rank of the spatial group) equal
// those of the same model on one rank. The counts they are made of are summed over the ranks;
// rows that no rank counted (e.g. the voxels of all but one rank of a spatial group) show here.
// Exit status 0 on every rank when all agree.
#include <cmath>
#include <cstdio>
#include <string>

#include "parallel/mpi_check.hpp"
#include "support/mpi_program.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

json segmentation_config() {
  return json::parse(R"({
    "model": {"input": {"channels": 1, "size": [8, 8, 8]},
              "layers": [{"type": "conv3d", "filters": 4, "padding": 1}, {"type": "relu"},
                         {"type": "conv3d", "filters": 3, "kernel": 1}]},
    "loss": {"type": "softmax_cross_entropy"},
    "optimizer": {"type": "sgd", "lr": 0.01},
    "data": {"source": "synthetic_fields", "task": "segmentation", "samples": 8, "validation_samples": 6,
             "size": 8, "channels": 1},
    "training": {"batch_size": 2, "seed": 5, "metrics": ["accuracy", "iou", "dice"]}})");
}

json regression_config() {
  return json::parse(R"({
    "model": {"input": {"channels": 2, "size": [8, 8, 8]},
              "layers": [{"type": "conv3d", "filters": 4, "padding": 1}, {"type": "leaky_relu"},
                         {"type": "max_pool3d"}, {"type": "flatten"}, {"type": "dense", "units": 4}]},
    "loss": {"type": "mse"},
    "optimizer": {"type": "sgd", "lr": 0.01},
    "data": {"source": "synthetic_fields", "samples": 8, "validation_samples": 6, "size": 8, "channels": 2},
    "training": {"batch_size": 2, "seed": 5}})");
}

train::RunOverrides quiet(parallel::Communicator group) {
  train::RunOverrides o;
  o.progress = false;
  o.group = std::move(group);
  return o;
}

bool agree(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b));
}

bool agree(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!agree(a[i], b[i])) return false;
  return true;
}

/// Validates the untrained model (the same weights on any number of ranks) split by
/// `distribution` over all ranks and on this rank alone.
void compare(testing::MpiCheckLog& log, json config, const json& distribution, const std::string& name) {
  json split = config;
  split["model"]["distribution"] = distribution;
  train::TrainingRun parallel_run(split, quiet(parallel::Communicator::world()));
  train::TrainingRun serial_run(config, quiet(parallel::Communicator::self()));
  const auto p = parallel_run.trainer().validate().metrics;
  const auto s = serial_run.trainer().validate().metrics;
  log.check(agree(p.accuracy, s.accuracy),
            name + ": accuracy " + std::to_string(p.accuracy) + " vs " + std::to_string(s.accuracy));
  log.check(agree(p.iou, s.iou) && agree(p.mean_iou, s.mean_iou) && agree(p.foreground_iou, s.foreground_iou),
            name + ": IoU mean " + std::to_string(p.mean_iou) + " vs " + std::to_string(s.mean_iou));
  log.check(agree(p.dice, s.dice) && agree(p.mean_dice, s.mean_dice) && agree(p.foreground_dice, s.foreground_dice),
            name + ": Dice mean " + std::to_string(p.mean_dice) + " vs " + std::to_string(s.mean_dice));
  log.check(agree(p.mae, s.mae) && agree(p.baseline_mae, s.baseline_mae),
            name + ": MAE " + std::to_string(p.mae) + " vs " + std::to_string(s.mae) + ", mean predictor " +
                std::to_string(p.baseline_mae) + " vs " + std::to_string(s.baseline_mae));
  std::printf("rank %d: %s: %s\n", parallel::Communicator::world().rank(), name.c_str(), p.str().c_str());
}

}  // namespace

int main(int argc, char* argv[]) {
  const testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  testing::MpiCheckLog log(world);
  try {
    const int n = world.size();
    compare(log, segmentation_config(), {{"sample", n}}, "segmentation over samples");
    compare(log, segmentation_config(), {{"depth", n}}, "segmentation in depth");
    compare(log, regression_config(), {{"sample", n}}, "regression over samples");
    compare(log, regression_config(), {{"depth", n}}, "regression in depth");
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return log.exit_status("validation_metrics_check");
}
