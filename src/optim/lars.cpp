#include "tessera/optim/lars.hpp"

#include <cmath>

#include "tessera/core/error.hpp"

namespace tessera::optim {
namespace {

void check_options(const LarsOptions& o, const std::string& where) {
  const detail::OptionChecks c{where};
  c.learning_rate(o.lr);
  c.fraction("momentum", o.momentum);
  if (o.nesterov && o.momentum == 0.0) c.fail("nesterov", "Nesterov momentum needs momentum > 0");
  c.non_negative("weight_decay", o.weight_decay);
  if (!(o.trust_coefficient > 0.0 && o.trust_coefficient <= 1e6))
    c.fail("trust_coefficient", "the trust coefficient (eta) must be positive (and at most 1e6), got " +
                                    format_number(o.trust_coefficient));
  c.non_negative("epsilon", o.epsilon);
}

const detail::HyperparameterFields<LarsOptions> kLarsFields = {{"lr", &LarsOptions::lr},
                                                         {"momentum", &LarsOptions::momentum},
                                                         {"weight_decay", &LarsOptions::weight_decay},
                                                         {"trust_coefficient", &LarsOptions::trust_coefficient}};

}  // namespace

Lars::Lars(const LarsOptions& options, const std::string& where) : options_(options) { check_options(options_, where); }

std::unique_ptr<Lars> Lars::from_json(ConfigObject& cfg) {
  LarsOptions o;
  o.lr = cfg.number("lr");
  o.momentum = cfg.number("momentum", o.momentum);
  o.nesterov = cfg.boolean("nesterov", o.nesterov);
  o.weight_decay = cfg.number("weight_decay", o.weight_decay);
  o.trust_coefficient = cfg.number("trust_coefficient", o.trust_coefficient);
  o.epsilon = cfg.number("epsilon", o.epsilon);
  o.exclude_bias_and_norm = cfg.boolean("exclude_bias_and_norm", o.exclude_bias_and_norm);
  return std::make_unique<Lars>(o, cfg.path());
}

void Lars::bind(const Tensor& values, const Tensor& grads) {
  bind_buffers("lars", values, grads);
  momentum_ = options_.momentum > 0.0 ? detail::make_state(numel_, "tessera::lars_momentum") : Tensor();
  steps_ = 0;
}

void Lars::step(float lr) {
  if (!bound_) throw Error("lars: step() called before bind()");
  if (numel_ > 0) {
    const DeviceView<float> p = values_.view();
    const DeviceView<float> g = grads_.view();
    const auto norms = tensor_sums(
        "tessera::lars_norms", KOKKOS_LAMBDA(const int64_t i, const int, double* v) {
          v[0] = static_cast<double>(p(i)) * p(i);
          v[1] = static_cast<double>(g(i)) * g(i);
        });
    std::vector<std::array<double, 2>> factors(norms.size());  // per tensor: ratio, weight decay
    ratios_.assign(norms.size(), 1.0);
    for (size_t t = 0; t < norms.size(); ++t) {
      if (excluded(t, options_.exclude_bias_and_norm)) {
        factors[t] = {1.0, 0.0};
        continue;
      }
      const double w = std::sqrt(norms[t][0]), gn = std::sqrt(norms[t][1]);
      if (w > 0.0 && gn > 0.0)
        ratios_[t] = options_.trust_coefficient * w / (gn + options_.weight_decay * w + options_.epsilon);
      factors[t] = {ratios_[t], options_.weight_decay};
    }
    upload_factors(factors);
    const auto f = this->factors();
    const DeviceView<float> buf = momentum_.view();
    const float momentum = static_cast<float>(options_.momentum);
    const bool use_momentum = options_.momentum > 0.0;
    const bool nesterov = options_.nesterov;
    const bool first = steps_ == 0;  // as torch.optim.SGD: the buffer starts at the first step, not at zero
    chunks().for_each(
        "tessera::lars_step", KOKKOS_LAMBDA(const int64_t i, const int t) {
          float d = static_cast<float>(f(t, 0)) * (g(i) + static_cast<float>(f(t, 1)) * p(i));
          if (use_momentum) {
            const float b = first ? d : momentum * buf(i) + d;
            buf(i) = b;
            d = nesterov ? d + momentum * b : b;
          }
          p(i) -= lr * d;
        });
    Kokkos::fence();
  }
  ++steps_;
}

std::vector<std::pair<std::string, Tensor>> Lars::state() {
  if (!bound_ || options_.momentum == 0.0) return {};
  return {{"lars.momentum", momentum_}};
}

void Lars::set_steps(int64_t steps) {
  if (steps < 0) throw Error("lars: the step counter cannot be negative, got " + std::to_string(steps));
  steps_ = steps;
}

std::string Lars::str() const {
  return "lars lr=" + format_number(options_.lr) + " momentum=" + format_number(options_.momentum) +
         " nesterov=" + (options_.nesterov ? "true" : "false") +
         " weight_decay=" + format_number(options_.weight_decay) +
         " trust_coefficient=" + format_number(options_.trust_coefficient) +
         " epsilon=" + format_number(options_.epsilon) +
         " exclude_bias_and_norm=" + (options_.exclude_bias_and_norm ? "true" : "false");
}

std::map<std::string, double> Lars::hyperparameters() const {
  return detail::hyperparameter_values(options_, kLarsFields);
}

void Lars::set_hyperparameter(const std::string& key, double value, const std::string& where) {
  if (key == "momentum") detail::check_momentum_switch(bound_, options_.momentum, value, where);
  options_ = detail::with_hyperparameter(options_, kLarsFields, key, value, where, "lars",
                                         [](const LarsOptions& o, const std::string& w) { check_options(o, w); });
}

}  // namespace tessera::optim
