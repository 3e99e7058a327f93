#pragma once
#include "tessera/train/trainer_hook.hpp"

namespace tessera::train {

/// Validates at the end of every epoch and after the last step (not after a step that ends
/// the run on a stop request): puts the result in the report, prints it and writes a
/// "validation" record to the metrics log.
class ValidationHook final : public TrainerHook {
 public:
  void on_step_end(Trainer& trainer, const StepEnd& step) override;
};

}  // namespace tessera::train
