#pragma once
#include <nlohmann/json.hpp>

#include "tessera/train/trainer_hook.hpp"

namespace tessera::train {

/// Writes the layout an "auto" model was planned with into the metrics log, as a record
/// {"event": "plan", ...} (plan::plan_json) before the run's "start", so a run's predicted
/// step time and memory sit beside the measured ones.
class LayoutPlanHook final : public TrainerHook {
 public:
  explicit LayoutPlanHook(nlohmann::json plan) : plan_(std::move(plan)) {}
  void on_run_start(Trainer& trainer, const RunStart& start) override;

 private:
  nlohmann::json plan_;
};

}  // namespace tessera::train
