#pragma once
#include "tessera/train/trainer_hook.hpp"

namespace tessera::train {

/// Writes the training checkpoint (options().checkpoint_file) every checkpoint_every steps
/// and after the last step (also when a stop request ends the run early), on rank 0: the ranks
/// hold the same parameters.
class CheckpointHook final : public TrainerHook {
 public:
  void on_step_end(Trainer& trainer, const StepEnd& step) override;
  void on_training_end(Trainer& trainer, int64_t steps) override;

 private:
  int64_t saved_at_ = -1;  // the step of the checkpoint written last, not written twice
};

}  // namespace tessera::train
