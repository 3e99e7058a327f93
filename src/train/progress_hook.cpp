#include "tessera/train/progress_hook.hpp"

#include "tessera/core/format.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::train {

void ProgressHook::on_step_end(Trainer& trainer, const StepEnd& step) {
  if (!step.window_end) return;
  const std::string status = format("loss %.4f  lr %.2e  %.1f samples/s", step.window_loss,
                                    static_cast<double>(step.lr), step.window_samples_per_s);
  const int64_t per_epoch = trainer.steps_per_epoch();
  trainer.progress().step(step.epoch, trainer.options().epochs, step.step - step.epoch * per_epoch, per_epoch,
                          step.step, status);
}

void ProgressHook::on_training_end(Trainer& trainer, int64_t /*steps*/) { trainer.progress().finish_line(); }

}  // namespace tessera::train
