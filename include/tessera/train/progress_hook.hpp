#pragma once
#include "tessera/train/trainer_hook.hpp"

namespace tessera::train {

/// Console progress: the epoch, step, mean loss, rate and throughput of every logging window.
class ProgressHook final : public TrainerHook {
 public:
  void on_step_end(Trainer& trainer, const StepEnd& step) override;
  void on_training_end(Trainer& trainer, int64_t steps) override;
};

}  // namespace tessera::train
