#include "tessera/ffn/fov_movement_hook.hpp"

#include <array>

#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::ffn {

void FovMovementHook::on_step_end(train::Trainer& trainer, const train::StepEnd& step) {
  if (!step.epoch_end && step.step != step.last_step && step.stop_signal == 0) return;
  std::array<int64_t, 2> counts{source_.examples_finished() - reported_examples_,
                                source_.positions_finished() - reported_positions_};
  reported_examples_ = source_.examples_finished();
  reported_positions_ = source_.positions_finished();
  trainer.group().allreduce_sum(counts.data(), 2);
  if (trainer.group().rank() != 0) return;
  const double per_example = counts[0] > 0 ? static_cast<double>(counts[1]) / static_cast<double>(counts[0]) : 0.0;
  if (trainer.options().progress)
    log::info(
        format("ffn: %lld training examples finished, %.2f FOVs each", static_cast<long long>(counts[0]), per_example));
  trainer.metrics().write(
      {{"event", "ffn_moves"}, {"step", step.step}, {"examples", counts[0]}, {"fovs_per_example", per_example}});
}

}  // namespace tessera::ffn
