#pragma once
#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "tessera/optim/lr_schedule.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::optim {

/// The "optimizer" section of a run config:
///   {"type": ..., <the optimizer's keys>, "schedule": {...},
///    "lr_scaling": {"reference_batch": N, "rule": "linear" | "sqrt"}}
/// The schedule needs the run's length and the scaling the global batch, which the trainer
/// knows only once it has the data, so the three parts are read separately. Errors name
/// `$.optimizer...` paths.
class OptimizerSection {
 public:
  explicit OptimizerSection(nlohmann::json section);

  /// The optimizer, from every key but "schedule" and "lr_scaling".
  std::unique_ptr<Optimizer> make_optimizer() const;
  /// The factor on every optimizer's rate for a global batch (per update: the micro-batch
  /// times the accumulated steps) k times "reference_batch": k under "rule": "linear" (Goyal
  /// et al., the default), sqrt(k) under "sqrt" (Krizhevsky's rule for adaptive methods,
  /// which the FFN scaling study of Dong et al. found better past 16 nodes). 1 without the key.
  double lr_factor(int64_t global_batch) const;
  /// The "schedule" over `total_steps` steps from `base_lr`; the base rate at every step
  /// without the key.
  std::unique_ptr<LrSchedule> make_schedule(double base_lr, int64_t total_steps) const;

  /// All three parts of a section, read (and checked) in that order.
  struct Parts {
    std::unique_ptr<Optimizer> optimizer;
    std::unique_ptr<LrSchedule> schedule;
    double lr_factor = 1.0;
  };
  static Parts read(const nlohmann::json& section, int64_t total_steps, int64_t global_batch);

 private:
  nlohmann::json section_;
};

}  // namespace tessera::optim
