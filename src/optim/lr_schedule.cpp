#include "tessera/optim/lr_schedule.hpp"

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::optim {
namespace {

constexpr double pi = 3.14159265358979323846;

class ConstantSchedule final : public LrSchedule {
 public:
  ConstantSchedule(double base_lr, int64_t warmup_steps, double warmup_start_factor)
      : LrSchedule(base_lr, warmup_steps, warmup_start_factor) {}

 protected:
  double decayed(int64_t) const override { return base_lr_; }
  std::string name() const override { return "constant"; }
  std::string parameters() const override { return ""; }
};

/// Multiplies the rate by gamma every step_size steps.
class StepSchedule final : public LrSchedule {
 public:
  StepSchedule(double base_lr, int64_t warmup_steps, double warmup_start_factor, int64_t step_size, double gamma)
      : LrSchedule(base_lr, warmup_steps, warmup_start_factor), step_size_(step_size), gamma_(gamma) {}

 protected:
  double decayed(int64_t k) const override { return base_lr_ * std::pow(gamma_, static_cast<double>(k / step_size_)); }
  std::string name() const override { return "step"; }
  std::string parameters() const override {
    return " step_size=" + std::to_string(step_size_) + " gamma=" + format_number(gamma_);
  }

 private:
  int64_t step_size_;
  double gamma_;
};

/// Half a cosine period from base_lr down to min_lr over the steps after the warmup.
class CosineSchedule final : public LrSchedule {
 public:
  CosineSchedule(double base_lr, int64_t warmup_steps, double warmup_start_factor, double min_lr, int64_t total_steps)
      : LrSchedule(base_lr, warmup_steps, warmup_start_factor), min_lr_(min_lr), total_steps_(total_steps) {}

 protected:
  double decayed(int64_t k) const override {
    const int64_t span = total_steps_ - warmup_steps_;
    if (k >= span) return min_lr_;
    const double progress = static_cast<double>(k) / static_cast<double>(span);
    return min_lr_ + (base_lr_ - min_lr_) * 0.5 * (1.0 + std::cos(pi * progress));
  }
  std::string name() const override { return "cosine"; }
  std::string parameters() const override {
    return " min_lr=" + format_number(min_lr_) + " total_steps=" + std::to_string(total_steps_);
  }

 private:
  double min_lr_;
  int64_t total_steps_;
};

/// (1 − progress)^power from base_lr down to min_lr over the steps after the warmup: the decay
/// of You et al.'s LARS recipes (power 2) and of MLPerf's large-batch ResNet runs.
class PolynomialSchedule final : public LrSchedule {
 public:
  PolynomialSchedule(double base_lr, int64_t warmup_steps, double warmup_start_factor, double min_lr, double power,
                     int64_t total_steps)
      : LrSchedule(base_lr, warmup_steps, warmup_start_factor),
        min_lr_(min_lr),
        power_(power),
        total_steps_(total_steps) {}

 protected:
  double decayed(int64_t k) const override {
    const int64_t span = total_steps_ - warmup_steps_;
    if (k >= span) return min_lr_;
    const double progress = static_cast<double>(k) / static_cast<double>(span);
    return min_lr_ + (base_lr_ - min_lr_) * std::pow(1.0 - progress, power_);
  }
  std::string name() const override { return "poly"; }
  std::string parameters() const override {
    return " power=" + format_number(power_) + " min_lr=" + format_number(min_lr_) +
           " total_steps=" + std::to_string(total_steps_);
  }

 private:
  double min_lr_, power_;
  int64_t total_steps_;
};

/// min_lr of a decaying schedule, checked against the base rate, and that the run outlasts the warmup.
double read_min_lr(ConfigObject& cfg, const std::string& type, double base_lr, int64_t warmup_steps,
                   int64_t total_steps) {
  const double min_lr = cfg.number("min_lr", 0.0);
  if (!(min_lr >= 0.0 && min_lr <= base_lr))
    throw ConfigError(cfg.path_of("min_lr"), "must be in [0, base learning rate " + format_number(base_lr) +
                                                 "], got " + format_number(min_lr));
  // The decay spans the run after the warmup, so the run must outlast it.
  if (total_steps <= warmup_steps)
    throw ConfigError(cfg.path_of("warmup_steps"), "a " + type + " schedule needs more total steps (" +
                                                       std::to_string(total_steps) + ") than warmup steps (" +
                                                       std::to_string(warmup_steps) + ")");
  return min_lr;
}

void check_base_lr(double base_lr) {
  if (!(base_lr > 0.0))
    throw Error("learning-rate schedule: the base learning rate must be positive, got " +
                format_number(base_lr));
}

}  // namespace

LrSchedule::LrSchedule(double base_lr, int64_t warmup_steps, double warmup_start_factor)
    : base_lr_(base_lr), warmup_steps_(warmup_steps), warmup_start_factor_(warmup_start_factor) {}

LrSchedule::~LrSchedule() = default;

double LrSchedule::lr(int64_t step) const {
  if (step < 0) throw Error("learning-rate schedule: step " + std::to_string(step) + " is negative");
  if (step < warmup_steps_) {
    const double progress = static_cast<double>(step) / static_cast<double>(warmup_steps_);
    return base_lr_ * (warmup_start_factor_ + (1.0 - warmup_start_factor_) * progress);
  }
  return decayed(step - warmup_steps_);
}

std::string LrSchedule::str() const {
  std::string s = name() + " base_lr=" + format_number(base_lr_);
  if (warmup_steps_ > 0)
    s += " warmup_steps=" + std::to_string(warmup_steps_) +
         " warmup_start_factor=" + format_number(warmup_start_factor_);
  return s + parameters();
}

std::unique_ptr<LrSchedule> LrSchedule::constant(double base_lr) {
  check_base_lr(base_lr);
  return std::make_unique<ConstantSchedule>(base_lr, 0, 1.0);
}

std::unique_ptr<LrSchedule> LrSchedule::from_json(ConfigObject& cfg, double base_lr, int64_t total_steps) {
  check_base_lr(base_lr);
  const std::string type = cfg.string("type");
  if (type != "constant" && type != "step" && type != "cosine" && type != "poly")
    throw ConfigError(cfg.path_of("type"),
                      "unknown learning-rate schedule \"" + type + "\" (known: constant, step, cosine, poly)");
  // Steps are bounded as training.max_steps is, so that sums with them stay within 64 bits.
  const int64_t warmup_steps = cfg.integer_in("warmup_steps", 0, int64_t{1} << 50, 0);
  const double warmup_start_factor = cfg.number_in("warmup_start_factor", 0.0, 1.0, 0.0);

  std::unique_ptr<LrSchedule> schedule;
  if (type == "constant") {
    schedule = std::make_unique<ConstantSchedule>(base_lr, warmup_steps, warmup_start_factor);
  } else if (type == "step") {
    const int64_t step_size = cfg.integer_in("step_size", 1, int64_t{1} << 50);
    const double gamma = cfg.number("gamma", 0.1);
    if (!(gamma > 0.0 && gamma <= 1e6))
      throw ConfigError(cfg.path_of("gamma"), "must be positive (and at most 1e6), got " + format_number(gamma));
    schedule = std::make_unique<StepSchedule>(base_lr, warmup_steps, warmup_start_factor, step_size, gamma);
  } else if (type == "cosine") {
    const double min_lr = read_min_lr(cfg, type, base_lr, warmup_steps, total_steps);
    schedule = std::make_unique<CosineSchedule>(base_lr, warmup_steps, warmup_start_factor, min_lr, total_steps);
  } else {
    const double min_lr = read_min_lr(cfg, type, base_lr, warmup_steps, total_steps);
    const double power = cfg.number_in("power", 0.0, 100.0, 2.0);
    if (!(power > 0.0)) throw ConfigError(cfg.path_of("power"), "must be positive, got " + format_number(power));
    schedule =
        std::make_unique<PolynomialSchedule>(base_lr, warmup_steps, warmup_start_factor, min_lr, power, total_steps);
  }
  cfg.finish();
  return schedule;
}

}  // namespace tessera::optim
