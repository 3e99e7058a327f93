#pragma once
// How far a flood-filling network's predictions move its training FOVs, reported each epoch.
#include "tessera/ffn/fov_training_source.hpp"
#include "tessera/train/trainer_hook.hpp"

namespace tessera::ffn {

/// At the end of every epoch and of the run: the training examples finished over all ranks
/// since the last report and the FOVs each took on average (1: the FOV never moved; an untrained
/// network rarely reaches the move threshold, a trained one follows its object), on the console
/// and as an {"event": "ffn_moves"} record in the metrics log.
class FovMovementHook : public train::TrainerHook {
 public:
  explicit FovMovementHook(const FovTrainingSource& source) : source_(source) {}
  void on_step_end(train::Trainer& trainer, const train::StepEnd& step) override;

 private:
  const FovTrainingSource& source_;
  int64_t reported_examples_ = 0, reported_positions_ = 0;
};

}  // namespace tessera::ffn
