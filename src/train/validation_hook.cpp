#include "tessera/train/validation_hook.hpp"

#include <algorithm>
#include <string>

#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::train {
namespace {

/// "epoch 3: validation loss 0.1234 (predicting the mean: 0.3375, ratio 0.366), MAE 0.2510
/// (predicting the mean: 0.4820)" or "epoch 3: validation loss 0.2500, accuracy 91.50%, top-5 99.10%"
std::string console_line(int64_t epoch, const ValidationResult& v) {
  std::string line = "epoch " + std::to_string(epoch + 1) + ": validation loss " + fixed(v.loss, 4);
  if (v.baseline >= 0)
    line += format(" (predicting the mean: %.4f, ratio %.3f)", v.baseline, v.loss / std::max(v.baseline, 1e-12));
  // The loss counts arg-max hits anyway; shown unless the chosen metrics show them.
  if (v.accuracy >= 0 && v.metrics.accuracy < 0) line += format(", accuracy %.2f%%", 100.0 * v.accuracy);
  const std::string metrics = v.metrics.str();
  if (!metrics.empty()) line += ", " + metrics;
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
  report.validation_metrics = v.metrics;
  trainer.progress().finish_line();
  log::info(console_line(step.epoch, v));
  nlohmann::json rec{{"event", "validation"}, {"step", step.step}, {"epoch", step.epoch}, {"loss", v.loss}};
  if (v.baseline >= 0) rec["baseline_loss"] = v.baseline;
  if (v.accuracy >= 0) rec["accuracy"] = v.accuracy;
  v.metrics.add_to(rec);
  trainer.metrics().write(rec);
}

}  // namespace tessera::train
