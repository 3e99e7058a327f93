#include "tessera/train/loss_scaler.hpp"

#include <cmath>
#include <limits>

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

namespace tessera::train {

LossScalingOptions LossScalingOptions::from_json(ConfigObject& cfg) {
  LossScalingOptions o;
  o.enabled = cfg.boolean("enabled", true);
  o.initial = cfg.number("initial", o.initial);
  o.growth = cfg.number("growth", o.growth);
  o.backoff = cfg.number("backoff", o.backoff);
  o.growth_interval = cfg.integer_in("growth_interval", 1, int64_t{1} << 40, o.growth_interval);
  // The largest finite float bounds the scale: beyond it the scaled gradient is inf at once.
  if (!(o.initial >= 1.0 && o.initial <= std::numeric_limits<float>::max()))
    throw ConfigError(cfg.path_of("initial"), "must be in [1, 3.4e38] (a float), got " + format("%g", o.initial));
  if (!(o.growth > 1.0 && o.growth <= 1e6))
    throw ConfigError(cfg.path_of("growth"), "must be above 1 (and at most 1e6), got " + format("%g", o.growth));
  if (!(o.backoff > 0.0 && o.backoff < 1.0))
    throw ConfigError(cfg.path_of("backoff"), "must be in (0, 1), got " + format("%g", o.backoff));
  cfg.finish();
  return o;
}

LossScaler::LossScaler(const LossScalingOptions& options) : options_(options), scale_(options.initial) {}

bool LossScaler::update(bool finite, const Tensor& grads) {
  if (!enabled()) return true;
  if (!finite) {
    // Never below 1: a scale under 1 would shrink gradients that fp16 already rounds.
    scale_ = std::max(1.0, scale_ * options_.backoff);
    good_steps_ = 0;
    ++skipped_;
    return false;
  }
  kokkos_backend::axpby(static_cast<float>(1.0 / scale_), grads, 0.0f, grads);
  if (++good_steps_ >= options_.growth_interval) {
    scale_ = std::min<double>(std::numeric_limits<float>::max(), scale_ * options_.growth);
    good_steps_ = 0;
  }
  return true;
}

void LossScaler::restore(double scale, int64_t good_steps) {
  if (!enabled() || !(scale >= 1.0)) return;
  scale_ = scale;
  good_steps_ = good_steps;
}

std::string LossScaler::describe() const {
  if (!enabled()) return "off";
  return "dynamic loss scaling from " + format("%g", scale_) + " (x" + format("%g", options_.growth) + " after " +
         std::to_string(options_.growth_interval) + " good steps, x" + format("%g", options_.backoff) +
         " on overflow)";
}

}  // namespace tessera::train
