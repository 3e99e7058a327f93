#include "tessera/optim/sgd.hpp"

#include "tessera/core/error.hpp"

namespace tessera::optim {
namespace {

void check_options(const SgdOptions& o, const std::string& where) {
  const detail::OptionChecks c{where};
  c.learning_rate(o.lr);
  c.fraction("momentum", o.momentum);
  if (!(o.dampening >= 0.0 && o.dampening <= 1.0))
    c.fail("dampening", "must be in [0, 1], got " + format_number(o.dampening));
  c.non_negative("weight_decay", o.weight_decay);
  // As in torch.optim.SGD: Nesterov's look-ahead is defined for undamped momentum only.
  if (o.nesterov && o.momentum == 0.0) c.fail("nesterov", "Nesterov momentum needs momentum > 0");
  if (o.nesterov && o.dampening != 0.0)
    c.fail("nesterov", "Nesterov momentum needs dampening 0, got " + format_number(o.dampening));
}

const detail::HyperparameterFields<SgdOptions> kSgdFields = {
    {"lr", &SgdOptions::lr}, {"momentum", &SgdOptions::momentum}, {"weight_decay", &SgdOptions::weight_decay}};

}  // namespace

Sgd::Sgd(const SgdOptions& options, const std::string& where) : options_(options) { check_options(options_, where); }

std::unique_ptr<Sgd> Sgd::from_json(ConfigObject& cfg) {
  SgdOptions o;
  o.lr = cfg.number("lr");
  o.momentum = cfg.number("momentum", o.momentum);
  o.dampening = cfg.number("dampening", o.dampening);
  o.nesterov = cfg.boolean("nesterov", o.nesterov);
  o.weight_decay = cfg.number("weight_decay", o.weight_decay);
  return std::make_unique<Sgd>(o, cfg.path());
}

void Sgd::bind(const Tensor& values, const Tensor& grads) {
  numel_ = detail::check_bind("sgd", values, grads);
  values_ = values;
  grads_ = grads;
  momentum_ = options_.momentum > 0.0 ? detail::make_state(numel_, "tessera::sgd_momentum") : Tensor();
  steps_ = 0;
  bound_ = true;
}

void Sgd::step(float lr) {
  if (!bound_) throw Error("sgd: step() called before bind()");
  if (numel_ > 0) {
    const DeviceView<float> p = values_.view();
    const DeviceView<float> g = grads_.view();
    const DeviceView<float> buf = momentum_.view();
    const float weight_decay = static_cast<float>(options_.weight_decay);
    const float momentum = static_cast<float>(options_.momentum);
    const float undamped = static_cast<float>(1.0 - options_.dampening);
    const bool use_momentum = options_.momentum > 0.0;
    const bool nesterov = options_.nesterov;
    // torch.optim.SGD starts the buffer at the first gradient, undamped, not at zero.
    const bool first = steps_ == 0;
    Kokkos::parallel_for(
        "tessera::sgd_step", RangePolicy(0, numel_), KOKKOS_LAMBDA(const int64_t i) {
          float d = g(i);
          if (weight_decay != 0.0f) d += weight_decay * p(i);
          if (use_momentum) {
            const float b = first ? d : momentum * buf(i) + undamped * d;
            buf(i) = b;
            d = nesterov ? d + momentum * b : b;
          }
          p(i) -= lr * d;
        });
  }
  ++steps_;
}

std::vector<std::pair<std::string, Tensor>> Sgd::state() {
  if (!bound_ || options_.momentum == 0.0) return {};
  return {{"sgd.momentum", momentum_}};
}

void Sgd::set_steps(int64_t steps) {
  if (steps < 0) throw Error("sgd: the step counter cannot be negative, got " + std::to_string(steps));
  steps_ = steps;
}

std::string Sgd::str() const {
  std::string s = "sgd lr=" + format_number(options_.lr) +
                  " momentum=" + format_number(options_.momentum) +
                  " nesterov=" + (options_.nesterov ? "true" : "false") +
                  " weight_decay=" + format_number(options_.weight_decay);
  if (options_.dampening != 0.0) s += " dampening=" + format_number(options_.dampening);
  return s;
}

std::map<std::string, double> Sgd::hyperparameters() const {
  return detail::hyperparameter_values(options_, kSgdFields);
}

void Sgd::set_hyperparameter(const std::string& key, double value, const std::string& where) {
  // The momentum buffer is state that partners exchange and checkpoints hold: a bound
  // optimizer keeps the set of state tensors it was bound with.
  if (key == "momentum") detail::check_momentum_switch(bound_, options_.momentum, value, where);
  options_ = detail::with_hyperparameter(options_, kSgdFields, key, value, where, "sgd",
                                         [](const SgdOptions& o, const std::string& w) { check_options(o, w); });
}

}  // namespace tessera::optim
