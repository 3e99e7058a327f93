#pragma once
#include <cstdint>
#include <string>

#include "tessera/core/config.hpp"
#include "tessera/core/tensor.hpp"

namespace tessera::train {

/// "training.loss_scaling": dynamic loss scaling, as PyTorch's GradScaler and LBANN's AMP do it
/// for fp16, whose smallest normal value (6.1e-5) lets small gradients flush to zero: the
/// loss's gradient is multiplied by a scale S before backprop and the parameter gradients
/// divided by S before the optimizer step. A step whose summed gradients hold an inf or NaN on
/// any rank is skipped on every rank and S multiplied by `backoff`; after `growth_interval`
/// steps in a row without one, S is multiplied by `growth`. fp16 runs use it by default; bf16
/// and fp32 runs, whose range is fp32's, need none and use none unless asked ("enabled").
struct LossScalingOptions {
  bool enabled = false;
  double initial = 65536.0;  // 2^16, GradScaler's default
  double growth = 2.0;
  double backoff = 0.5;
  int64_t growth_interval = 2000;

  /// Reads {"enabled", "initial", "growth", "backoff", "growth_interval"}; a section without
  /// "enabled" enables scaling. Throws ConfigError naming the key for a value out of range.
  static LossScalingOptions from_json(ConfigObject& cfg);
};

/// The state of dynamic loss scaling and its rules (LossScalingOptions). The trainer asks it
/// for the scale, scales the loss gradient, and after the gradients are summed reports whether
/// they were finite everywhere; the scaler then unscales them and says whether to step.
class LossScaler {
 public:
  LossScaler() = default;
  explicit LossScaler(const LossScalingOptions& options);

  bool enabled() const { return options_.enabled; }
  /// The current scale (1 when disabled).
  float scale() const { return enabled() ? static_cast<float>(scale_) : 1.0f; }
  /// After a step's gradients are summed: `finite` says whether every rank's were. Finite:
  /// divides `grads` by the scale and returns true (take the step), growing the scale after
  /// growth_interval such steps. Not finite: backs the scale off and returns false (skip the
  /// step; the caller leaves the parameters and optimizer state as they are).
  bool update(bool finite, const Tensor& grads);
  /// Steps skipped so far, and steps taken since the last skip (or start).
  int64_t skipped() const { return skipped_; }
  int64_t good_steps() const { return good_steps_; }
  /// What a checkpoint holds, and restoring it.
  void restore(double scale, int64_t good_steps);
  /// "dynamic loss scaling from 65536 (x2 after 2000 good steps, x0.5 on overflow)", or "off".
  std::string describe() const;

 private:
  LossScalingOptions options_;
  double scale_ = 1.0;
  int64_t good_steps_ = 0, skipped_ = 0;
};

}  // namespace tessera::train
