#include "tessera/optim/lamb.hpp"

#include <cmath>

#include "tessera/core/error.hpp"

namespace tessera::optim {
namespace {

void check_options(const LambOptions& o, const std::string& where) {
  const detail::OptionChecks c{where};
  c.learning_rate(o.lr);
  c.fraction("beta1", o.beta1);
  c.fraction("beta2", o.beta2);
  c.non_negative("epsilon", o.epsilon);
  c.non_negative("weight_decay", o.weight_decay);
}

const detail::HyperparameterFields<LambOptions> kLambFields = {{"lr", &LambOptions::lr},
                                                         {"beta1", &LambOptions::beta1},
                                                         {"beta2", &LambOptions::beta2},
                                                         {"epsilon", &LambOptions::epsilon},
                                                         {"weight_decay", &LambOptions::weight_decay}};

}  // namespace

Lamb::Lamb(const LambOptions& options, const std::string& where) : options_(options) { check_options(options_, where); }

std::unique_ptr<Lamb> Lamb::from_json(ConfigObject& cfg) {
  LambOptions o;
  o.lr = cfg.number("lr", o.lr);
  o.beta1 = cfg.number("beta1", o.beta1);
  o.beta2 = cfg.number("beta2", o.beta2);
  o.epsilon = cfg.number("epsilon", o.epsilon);
  o.weight_decay = cfg.number("weight_decay", o.weight_decay);
  o.exclude_bias_and_norm = cfg.boolean("exclude_bias_and_norm", o.exclude_bias_and_norm);
  return std::make_unique<Lamb>(o, cfg.path());
}

void Lamb::bind(const Tensor& values, const Tensor& grads) {
  bind_buffers("lamb", values, grads);
  m_ = detail::make_state(numel_, "tessera::lamb_m");
  v_ = detail::make_state(numel_, "tessera::lamb_v");
  steps_ = 0;
}

void Lamb::step(float lr) {
  if (!bound_) throw Error("lamb: step() called before bind()");
  if (numel_ > 0) {
    const DeviceView<float> p = values_.view();
    const DeviceView<float> g = grads_.view();
    const DeviceView<float> m = m_.view();
    const DeviceView<float> v = v_.view();
    const float beta1 = static_cast<float>(options_.beta1), beta2 = static_cast<float>(options_.beta2);
    const float one_minus_beta1 = static_cast<float>(1.0 - options_.beta1);
    const float one_minus_beta2 = static_cast<float>(1.0 - options_.beta2);
    Kokkos::parallel_for(
        "tessera::lamb_moments", RangePolicy(0, numel_), KOKKOS_LAMBDA(const int64_t i) {
          const float d = g(i);
          m(i) = beta1 * m(i) + one_minus_beta1 * d;
          v(i) = beta2 * v(i) + one_minus_beta2 * d * d;
        });
    // Bias corrections in double: 1 − beta2^t cancels badly in float when beta2 is near 1.
    const double t = static_cast<double>(steps_ + 1);
    const float inv_bc1 = static_cast<float>(1.0 / (1.0 - std::pow(options_.beta1, t)));
    const float inv_bc2 = static_cast<float>(1.0 / (1.0 - std::pow(options_.beta2, t)));
    const float epsilon = static_cast<float>(options_.epsilon);
    // The weight decay of tensor t is read from column 1 of a table: first the decays alone,
    // for the norms of u, then (ratio, decay) for the update.
    std::vector<std::array<double, 2>> factors(tensor_count());
    for (size_t k = 0; k < factors.size(); ++k)
      factors[k] = {1.0, excluded(k, options_.exclude_bias_and_norm) ? 0.0 : options_.weight_decay};
    upload_factors(factors);
    const auto f = this->factors();
    const auto update = KOKKOS_LAMBDA(const int64_t i, const int k) {
      return (m(i) * inv_bc1) / (math::sqrt(v(i) * inv_bc2) + epsilon) + static_cast<float>(f(k, 1)) * p(i);
    };
    const auto norms = tensor_sums(
        "tessera::lamb_norms", KOKKOS_LAMBDA(const int64_t i, const int k, double* s) {
          const double u = update(i, k);
          s[0] = static_cast<double>(p(i)) * p(i);
          s[1] = u * u;
        });
    ratios_.assign(norms.size(), 1.0);
    for (size_t k = 0; k < norms.size(); ++k) {
      const double w = std::sqrt(norms[k][0]), u = std::sqrt(norms[k][1]);
      if (!excluded(k, options_.exclude_bias_and_norm) && w > 0.0 && u > 0.0) ratios_[k] = w / u;
      factors[k][0] = ratios_[k];
    }
    upload_factors(factors);
    chunks().for_each(
        "tessera::lamb_step", KOKKOS_LAMBDA(const int64_t i, const int k) {
          const float u = update(i, k);  // before p(i) changes: u reads it
          p(i) -= lr * static_cast<float>(f(k, 0)) * u;
        });
    Kokkos::fence();
  }
  ++steps_;
}

std::vector<std::pair<std::string, Tensor>> Lamb::state() {
  if (!bound_) return {};
  return {{"lamb.m", m_}, {"lamb.v", v_}};
}

void Lamb::set_steps(int64_t steps) {
  if (steps < 0) throw Error("lamb: the step counter cannot be negative, got " + std::to_string(steps));
  steps_ = steps;
}

std::string Lamb::str() const {
  return "lamb lr=" + format_number(options_.lr) + " beta1=" + format_number(options_.beta1) +
         " beta2=" + format_number(options_.beta2) + " epsilon=" + format_number(options_.epsilon) +
         " weight_decay=" + format_number(options_.weight_decay) +
         " exclude_bias_and_norm=" + (options_.exclude_bias_and_norm ? "true" : "false");
}

std::map<std::string, double> Lamb::hyperparameters() const {
  return detail::hyperparameter_values(options_, kLambFields);
}

void Lamb::set_hyperparameter(const std::string& key, double value, const std::string& where) {
  options_ = detail::with_hyperparameter(options_, kLambFields, key, value, where, "lamb",
                                         [](const LambOptions& o, const std::string& w) { check_options(o, w); });
}

}  // namespace tessera::optim
