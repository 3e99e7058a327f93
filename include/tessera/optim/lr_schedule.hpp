#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "tessera/core/config.hpp"

namespace tessera::optim {

/// The learning rate as a function of the 0-based optimizer step. Every schedule may start
/// with a linear warmup: lr(0) = base·warmup_start_factor, rising linearly to base at
/// step warmup_steps. After the warmup the schedule's own decay applies, counted from the
/// end of the warmup:
///   constant: base
///   step:     base·gamma^floor((step − warmup_steps) / step_size)
///   cosine:   min_lr + (base − min_lr)·(1 + cos(π·(step − warmup_steps) / (total_steps − warmup_steps)))/2,
///             reaching min_lr at total_steps and staying there.
///   poly:     min_lr + (base − min_lr)·(1 − (step − warmup_steps) / (total_steps − warmup_steps))^power,
///             likewise (LARS's usual decay, power 2 by default).
class LrSchedule {
 public:
  virtual ~LrSchedule();

  /// The learning rate for optimizer step `step` (>= 0).
  double lr(int64_t step) const;
  double base_lr() const { return base_lr_; }
  /// One line for logs: "cosine base_lr=0.1 warmup_steps=100 warmup_start_factor=0 min_lr=0 total_steps=1000".
  std::string str() const;

  /// Reads {"type": "constant"|"step"|"cosine"|"poly", "warmup_steps": 0, "warmup_start_factor": 0,
  /// step: "step_size" (required), "gamma": 0.1; cosine: "min_lr": 0; poly: "min_lr": 0,
  /// "power": 2} and checks that nothing
  /// else is in the object. `total_steps` is the length of the run (cosine's horizon).
  static std::unique_ptr<LrSchedule> from_json(ConfigObject& cfg, double base_lr, int64_t total_steps);
  /// `base_lr` at every step: the default when a configuration has no schedule.
  static std::unique_ptr<LrSchedule> constant(double base_lr);

 protected:
  LrSchedule(double base_lr, int64_t warmup_steps, double warmup_start_factor);
  /// The rate at `steps_after_warmup` (>= 0) steps past the end of the warmup.
  virtual double decayed(int64_t steps_after_warmup) const = 0;
  virtual std::string name() const = 0;
  /// " key=value" pairs of the schedule's own parameters, for str().
  virtual std::string parameters() const = 0;

  double base_lr_;
  int64_t warmup_steps_;
  double warmup_start_factor_;
};

}  // namespace tessera::optim
