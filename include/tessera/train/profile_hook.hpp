#pragma once
#include <chrono>

#include "tessera/train/trainer_hook.hpp"

namespace tessera::train {

/// With `options().profile`, times the run's regions (core/profiling.hpp) and reports them at
/// the end, on the console and as a "profile" record. The first steps build backend
/// primitives and first-touch buffers; like the benchmark protocol, the profile leaves two
/// warm-up steps out when the run has more than two. Without it, the profiler is reset and
/// left off.
class ProfileHook final : public TrainerHook {
 public:
  void on_run_start(Trainer& trainer, const RunStart& start) override;
  void on_step_start(Trainer& trainer, int64_t step) override;
  void on_run_end(Trainer& trainer, const RunEnd& end) override;

 private:
  int64_t first_profiled_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tessera::train
