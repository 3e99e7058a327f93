#include "tessera/optim/optimizer_section.hpp"

#include <cmath>
#include <utility>

#include "tessera/core/error.hpp"

namespace tessera::optim {

OptimizerSection::OptimizerSection(nlohmann::json section) : section_(std::move(section)) {}

std::unique_ptr<Optimizer> OptimizerSection::make_optimizer() const {
  nlohmann::json optimizer_only = section_;
  if (optimizer_only.is_object()) {
    optimizer_only.erase("schedule");
    optimizer_only.erase("lr_scaling");
  }
  ConfigObject cfg(optimizer_only, "$.optimizer");
  return Optimizer::from_json(cfg);
}

double OptimizerSection::lr_factor(int64_t global_batch) const {
  if (!section_.contains("lr_scaling")) return 1.0;
  ConfigObject scaling(section_.at("lr_scaling"), "$.optimizer.lr_scaling");
  const int64_t reference = scaling.integer_in("reference_batch", 1, int64_t{1} << 40);
  const std::string rule = scaling.choice("rule", {"linear", "sqrt"}, "linear");
  scaling.finish();
  const double ratio = static_cast<double>(global_batch) / static_cast<double>(reference);
  return rule == "sqrt" ? std::sqrt(ratio) : ratio;
}

std::unique_ptr<LrSchedule> OptimizerSection::make_schedule(double base_lr, int64_t total_steps) const {
  if (!section_.contains("schedule")) return LrSchedule::constant(base_lr);
  ConfigObject sched(section_.at("schedule"), "$.optimizer.schedule");
  return LrSchedule::from_json(sched, base_lr, total_steps);
}

OptimizerSection::Parts OptimizerSection::read(const nlohmann::json& section, int64_t total_steps,
                                               int64_t global_batch) {
  const OptimizerSection s(section);
  Parts parts;
  parts.optimizer = s.make_optimizer();
  parts.lr_factor = s.lr_factor(global_batch);
  parts.schedule = s.make_schedule(parts.optimizer->base_lr(), total_steps);
  return parts;
}

}  // namespace tessera::optim
