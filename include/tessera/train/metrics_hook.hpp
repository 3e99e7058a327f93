#pragma once
#include <array>
#include <chrono>

#include "tessera/parallel/traffic_counter.hpp"
#include "tessera/train/trainer_hook.hpp"

namespace tessera::train {

/// Writes the run's own records to the metrics log: "start" (data, batch, optimizer,
/// schedule), "train" at every logging window and "end" (totals; "stopped_by" names the signal
/// of a run stopped early). The validation and profile
/// records come from their hooks.
class MetricsHook final : public TrainerHook {
 public:
  void on_run_start(Trainer& trainer, const RunStart& start) override;
  void on_step_end(Trainer& trainer, const StepEnd& step) override;
  void on_run_end(Trainer& trainer, const RunEnd& end) override;

 private:
  std::chrono::steady_clock::time_point run_start_;
  std::array<double, parallel::TrafficCounter::kinds> sent_at_start_{};  // bytes sent before the run
};

}  // namespace tessera::train
