#include "tessera/optim/adam.hpp"

#include <cmath>

#include "tessera/core/error.hpp"

namespace tessera::optim {
namespace {

void check_options(const AdamOptions& o, const std::string& where) {
  const detail::OptionChecks c{where};
  c.learning_rate(o.lr);
  c.fraction("beta1", o.beta1);
  c.fraction("beta2", o.beta2);
  c.non_negative("epsilon", o.epsilon);
  c.non_negative("weight_decay", o.weight_decay);
}

const detail::HyperparameterFields<AdamOptions> kAdamFields = {{"lr", &AdamOptions::lr},
                                                         {"beta1", &AdamOptions::beta1},
                                                         {"beta2", &AdamOptions::beta2},
                                                         {"epsilon", &AdamOptions::epsilon},
                                                         {"weight_decay", &AdamOptions::weight_decay}};

}  // namespace

Adam::Adam(const AdamOptions& options, const std::string& where) : options_(options) { check_options(options_, where); }

std::unique_ptr<Adam> Adam::from_json(ConfigObject& cfg) {
  AdamOptions o;
  o.lr = cfg.number("lr", o.lr);
  o.beta1 = cfg.number("beta1", o.beta1);
  o.beta2 = cfg.number("beta2", o.beta2);
  o.epsilon = cfg.number("epsilon", o.epsilon);
  o.weight_decay = cfg.number("weight_decay", o.weight_decay);
  o.decoupled_weight_decay = cfg.boolean("decoupled_weight_decay", o.decoupled_weight_decay);
  return std::make_unique<Adam>(o, cfg.path());
}

void Adam::bind(const Tensor& values, const Tensor& grads) {
  numel_ = detail::check_bind("adam", values, grads);
  values_ = values;
  grads_ = grads;
  m_ = detail::make_state(numel_, "tessera::adam_m");
  v_ = detail::make_state(numel_, "tessera::adam_v");
  steps_ = 0;
  bound_ = true;
}

void Adam::step(float lr) {
  if (!bound_) throw Error("adam: step() called before bind()");
  if (numel_ > 0) {
    const DeviceView<float> p = values_.view();
    const DeviceView<float> g = grads_.view();
    const DeviceView<float> m = m_.view();
    const DeviceView<float> v = v_.view();
    // The bias corrections are per-step scalars, computed here in double because 1 − beta2^t
    // cancels badly in float when beta2 is near 1, and folded into two factors as PyTorch does.
    const double t = static_cast<double>(steps_ + 1);
    const float step_size = static_cast<float>(lr / (1.0 - std::pow(options_.beta1, t)));
    const float bias_correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(options_.beta2, t)));
    const float beta1 = static_cast<float>(options_.beta1);
    const float beta2 = static_cast<float>(options_.beta2);
    const float one_minus_beta1 = static_cast<float>(1.0 - options_.beta1);
    const float one_minus_beta2 = static_cast<float>(1.0 - options_.beta2);
    const float epsilon = static_cast<float>(options_.epsilon);
    const bool decoupled = options_.decoupled_weight_decay;
    const float l2 = decoupled ? 0.0f : static_cast<float>(options_.weight_decay);
    const float decay = decoupled ? static_cast<float>(1.0 - static_cast<double>(lr) * options_.weight_decay) : 1.0f;
    Kokkos::parallel_for(
        "tessera::adam_step", RangePolicy(0, numel_), KOKKOS_LAMBDA(const int64_t i) {
          float x = p(i);
          float d = g(i);
          if (l2 != 0.0f) d += l2 * x;
          if (decay != 1.0f) x *= decay;
          const float mi = beta1 * m(i) + one_minus_beta1 * d;
          const float vi = beta2 * v(i) + one_minus_beta2 * d * d;
          m(i) = mi;
          v(i) = vi;
          p(i) = x - step_size * (mi / (math::sqrt(vi) / bias_correction2_sqrt + epsilon));
        });
  }
  ++steps_;
}

std::vector<std::pair<std::string, Tensor>> Adam::state() {
  if (!bound_) return {};
  return {{"adam.m", m_}, {"adam.v", v_}};
}

void Adam::set_steps(int64_t steps) {
  if (steps < 0) throw Error("adam: the step counter cannot be negative, got " + std::to_string(steps));
  steps_ = steps;
}

std::string Adam::str() const {
  return "adam lr=" + format_number(options_.lr) + " beta1=" + format_number(options_.beta1) +
         " beta2=" + format_number(options_.beta2) + " epsilon=" + format_number(options_.epsilon) +
         " weight_decay=" + format_number(options_.weight_decay) +
         " decoupled_weight_decay=" + (options_.decoupled_weight_decay ? "true" : "false");
}

std::map<std::string, double> Adam::hyperparameters() const {
  return detail::hyperparameter_values(options_, kAdamFields);
}

void Adam::set_hyperparameter(const std::string& key, double value, const std::string& where) {
  options_ = detail::with_hyperparameter(options_, kAdamFields, key, value, where, "adam",
                                         [](const AdamOptions& o, const std::string& w) { check_options(o, w); });
}

}  // namespace tessera::optim
