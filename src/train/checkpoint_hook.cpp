#include "tessera/train/checkpoint_hook.hpp"

#include "tessera/train/checkpoint_rotation.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::train {
namespace {

/// Rank 0 writes; the other ranks take part only when shards must be gathered.
bool writes(Trainer& trainer) {
  return !trainer.options().checkpoint_file.empty() &&
         (trainer.group().rank() == 0 || trainer.model().parameters().has_shards());
}

void save(Trainer& trainer, int64_t steps) {
  if (trainer.options().keep_previous_checkpoint && trainer.group().rank() == 0)
    keep_previous_checkpoint(trainer.options().checkpoint_file);
  save_checkpoint(trainer.options().checkpoint_file, trainer.model().parameters(), trainer.optimizer(),
                  trainer.progress_at(steps), trainer.group().rank() == 0);
}

}  // namespace

void CheckpointHook::on_step_end(Trainer& trainer, const StepEnd& step) {
  const int64_t every = trainer.options().checkpoint_every;
  if (writes(trainer) && every > 0 && step.step % every == 0) {
    save(trainer, step.step);
    saved_at_ = step.step;
  }
}

void CheckpointHook::on_training_end(Trainer& trainer, int64_t steps) {
  if (writes(trainer) && saved_at_ != steps) save(trainer, steps);
}

}  // namespace tessera::train
