#include "tessera/train/validation_hook.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "tessera/core/log.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::train {
namespace {

/// "epoch 3: validation loss 0.1234 (predicting the mean: 0.3375, ratio 0.366), accuracy 91.50%"
std::string console_line(int64_t epoch, const ValidationResult& v) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.4f", v.loss);
  std::string line = "epoch " + std::to_string(epoch + 1) + ": validation loss " + buf;
  if (v.baseline >= 0) {
    std::snprintf(buf, sizeof buf, " (predicting the mean: %.4f, ratio %.3f)", v.baseline,
                  v.loss / std::max(v.baseline, 1e-12));
    line += buf;
  }
  if (v.accuracy >= 0) {
    std::snprintf(buf, sizeof buf, ", accuracy %.2f%%", 100.0 * v.accuracy);
    line += buf;
  }
  return line;
}

}  // namespace

void ValidationHook::on_step_end(Trainer& trainer, const StepEnd& step) {
  // A stopping run spends the batch system's grace time on its checkpoint, not on validation.
  if ((!step.epoch_end && step.step != step.last_step) || step.stop_signal != 0) return;
  const ValidationResult v = trainer.validate();
  TrainingReport& report = trainer.report();
  report.validation_loss = v.loss;
  report.validation_baseline = v.baseline;
  report.validation_accuracy = v.accuracy;
  trainer.progress().finish_line();
  log::info(console_line(step.epoch, v));
  nlohmann::json rec{{"event", "validation"}, {"step", step.step}, {"epoch", step.epoch}, {"loss", v.loss}};
  if (v.baseline >= 0) rec["baseline_loss"] = v.baseline;
  if (v.accuracy >= 0) rec["accuracy"] = v.accuracy;
  trainer.metrics().write(rec);
}

}  // namespace tessera::train
