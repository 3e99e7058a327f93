#pragma once
// The core of the MPI training-equivalence programs (tests/parallel): one config trained over all
// ranks, the same model trained on this rank alone, and how far the two runs drift apart.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "tessera/parallel/communicator.hpp"
#include "tessera/train/training_run.hpp"

namespace tessera::testing {

/// Trains `parallel_config` over the world and `serial_config` on this rank alone (no progress
/// output), then compares every step's loss, the final weights and the validation loss.
class RunComparison {
 public:
  /// `extension` makes each run's RunExtension (a flood-filling network's), if it has one.
  using ExtensionFactory = std::function<std::shared_ptr<train::RunExtension>()>;
  RunComparison(const nlohmann::json& parallel_config, const nlohmann::json& serial_config,
                const ExtensionFactory& extension = {})
      : parallel_(parallel_config, overrides(parallel::Communicator::world(), extension)),
        serial_(serial_config, overrides(parallel::Communicator::self(), extension)) {
    parallel_report_ = parallel_.run();
    serial_report_ = serial_.run();
    const auto& lp = parallel_report_.step_losses;
    const auto& ls = serial_report_.step_losses;
    for (size_t i = 0; i < ls.size(); ++i)
      loss_diff = std::max(loss_diff, std::abs(lp.at(i) - ls[i]) / std::abs(ls[i]));
    // Parameter by parameter: a shard of a channel-split layer is compared with its slice.
    for (const auto& p : parallel_.model().parameters().all()) {
      const auto wp = p->value.to_host();
      const auto ws = serial_.model().parameters().find(p->name)->value.to_host();
      for (size_t i = 0; i < wp.size(); ++i) {
        const float w = ws[static_cast<size_t>(p->shard.whole_index(static_cast<int64_t>(i)))];
        weight_diff = std::max(weight_diff, static_cast<double>(std::abs(wp[i] - w)));
        weight_scale = std::max(weight_scale, static_cast<double>(std::abs(w)));
      }
    }
    validation_diff =
        std::abs(parallel_report_.validation_loss - serial_report_.validation_loss) / serial_report_.validation_loss;
  }

  /// The run over all ranks (its model may be inspected or changed afterwards).
  train::TrainingRun& parallel() { return parallel_; }
  train::TrainingRun& serial() { return serial_; }
  const train::TrainingReport& serial_report() const { return serial_report_; }

  /// True when the step counts differ or a difference exceeds `tolerance` (weights: relative
  /// to the largest weight).
  bool differs_beyond(double tolerance) const {
    return parallel_report_.step_losses.size() != serial_report_.step_losses.size() || loss_diff > tolerance ||
           weight_diff > tolerance * weight_scale || validation_diff > tolerance;
  }

  double loss_diff = 0, weight_diff = 0, weight_scale = 0, validation_diff = 0;

 private:
  static train::RunOverrides overrides(parallel::Communicator group, const ExtensionFactory& extension) {
    train::RunOverrides o;
    o.progress = false;
    o.group = group;
    if (extension) o.extension = extension();
    return o;
  }
  train::TrainingRun parallel_, serial_;
  train::TrainingReport parallel_report_, serial_report_;
};

}  // namespace tessera::testing
