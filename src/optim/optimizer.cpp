#include "tessera/optim/optimizer.hpp"

#include "tessera/core/error.hpp"
#include "tessera/optim/adam.hpp"
#include "tessera/optim/lamb.hpp"
#include "tessera/optim/lars.hpp"
#include "tessera/optim/sgd.hpp"

namespace tessera::optim {

Optimizer::~Optimizer() = default;

void Optimizer::set_tensors(const ParameterTensors&) {}

std::unique_ptr<Optimizer> Optimizer::from_json(ConfigObject& cfg) {
  const std::string type = cfg.string("type");
  std::unique_ptr<Optimizer> optimizer;
  if (type == "sgd") {
    optimizer = Sgd::from_json(cfg);
  } else if (type == "adam") {
    optimizer = Adam::from_json(cfg);
  } else if (type == "lars") {
    optimizer = Lars::from_json(cfg);
  } else if (type == "lamb") {
    optimizer = Lamb::from_json(cfg);
  } else {
    throw ConfigError(cfg.path_of("type"), "unknown optimizer \"" + type + "\" (known: sgd, adam, lars, lamb)");
  }
  cfg.finish();
  return optimizer;
}

namespace detail {

int64_t check_bind(const std::string& optimizer, const Tensor& values, const Tensor& grads) {
  // A default Tensor has rank 0 and so numel 1; a model without trainable parameters hands
  // over two such empty tensors, which bind to zero elements.
  const int64_t n_values = values.empty() ? 0 : values.numel();
  const int64_t n_grads = grads.empty() ? 0 : grads.numel();
  require_shape(n_values == n_grads, optimizer + ": cannot bind parameters " + values.shape().str() + " (" +
                                         std::to_string(n_values) + " elements) to gradients " + grads.shape().str() +
                                         " (" + std::to_string(n_grads) + " elements)");
  return n_values;
}

Tensor make_state(int64_t numel, const std::string& label) { return Tensor(Shape{numel}, label); }

void OptionChecks::fail(const std::string& key, const std::string& problem) const {
  throw ConfigError(where + "." + key, problem);
}

// Hyperparameters past a million are typos, and their products with gradients overflow fp32:
// refused by name rather than met as a diverged loss.
constexpr double kLargestHyperparameter = 1e6;

void OptionChecks::learning_rate(double lr) const {
  if (!(lr > 0.0 && lr <= kLargestHyperparameter))
    fail("lr", "the learning rate must be positive (and at most 1e6), got " + format_number(lr));
}

void OptionChecks::fraction(const char* key, double value) const {
  if (!(value >= 0.0 && value < 1.0)) fail(key, "must be in [0, 1), got " + format_number(value));
}

void OptionChecks::non_negative(const char* key, double value) const {
  if (!(value >= 0.0 && value <= kLargestHyperparameter))
    fail(key, "must be non-negative (and at most 1e6), got " + format_number(value));
}

void check_momentum_switch(bool bound, double momentum, double value, const std::string& where) {
  if (bound && (value > 0.0) != (momentum > 0.0))
    throw ConfigError(where + ".momentum", "can vary but not be switched on or off during training (from " +
                                               format_number(momentum) + " to " + format_number(value) + ")");
}

}  // namespace detail
}  // namespace tessera::optim
