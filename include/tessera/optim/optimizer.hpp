#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/optim/parameter_tensors.hpp"

namespace tessera::optim {

/// Updates a flat parameter buffer from its flat gradient buffer. The model's ParameterStore
/// keeps every trainable value in one contiguous tensor and every gradient in another, so a
/// step is one elementwise kernel however many layers the model has. Gradients are only read.
class Optimizer {
 public:
  virtual ~Optimizer();

  /// "sgd", "adam", "lars" or "lamb"; what a checkpoint records to check it is restored into the same kind.
  virtual std::string type() const = 0;
  /// Binds to the parameter and gradient buffers (equal numel; both empty is allowed) and
  /// allocates zeroed state. Rebinding discards the state and resets the step counter.
  virtual void bind(const Tensor& values, const Tensor& grads) = 0;
  /// Where each parameter tensor lies in the buffers. Layer-wise methods (LARS, LAMB) take
  /// a ratio per tensor and need it (without it they treat the buffer as one tensor);
  /// elementwise ones ignore it. May come before or after bind().
  virtual void set_tensors(const ParameterTensors& tensors);
  /// One update with learning rate `lr` (the schedule's value for this step); then steps() grows by 1.
  virtual void step(float lr) = 0;
  /// Named state tensors aliasing the optimizer's own storage, so a checkpoint reads them to
  /// save and deep-copies into them to restore (together with set_steps). Empty before bind,
  /// and for plain SGD, which has no state.
  virtual std::vector<std::pair<std::string, Tensor>> state() = 0;
  /// Updates applied so far (Adam's bias correction and SGD's first momentum step depend on it).
  virtual int64_t steps() const = 0;
  virtual void set_steps(int64_t steps) = 0;
  /// The learning rate from the configuration, which a schedule scales over time.
  virtual double base_lr() const = 0;
  /// One line for logs: "sgd lr=0.001 momentum=0.9 nesterov=false weight_decay=0".
  virtual std::string str() const = 0;

  /// The numeric hyper-parameters a population of trainers may vary and hand on to each other
  /// (train/ltfb/tournament_hook.hpp), by their config key: "lr", "weight_decay" and the
  /// optimizer's own ("momentum"; "beta1", "beta2", "epsilon").
  virtual std::map<std::string, double> hyperparameters() const = 0;
  /// Sets one of hyperparameters() by key, checked as the config's value would be: throws
  /// ConfigError naming `where` + ".<key>" for an unknown key or a value out of range, and
  /// leaves the optimizer unchanged then. A change of "lr" takes effect through base_lr(),
  /// which the trainer reads every step.
  virtual void set_hyperparameter(const std::string& key, double value, const std::string& where) = 0;

  /// Reads {"type": "sgd"|"adam"|"lars"|"lamb", "lr": ..., ...} and checks that nothing else is in the
  /// object; a missing, unknown or out-of-range key is a ConfigError naming its JSON path.
  static std::unique_ptr<Optimizer> from_json(ConfigObject& cfg);
};

namespace detail {
/// Throws ShapeError unless values and grads hold equally many elements; returns that count
/// (0 for two empty tensors).
int64_t check_bind(const std::string& optimizer, const Tensor& values, const Tensor& grads);
/// A zeroed state tensor of `numel` elements (a valid zero-length tensor when numel is 0).
Tensor make_state(int64_t numel, const std::string& label);

/// The range checks of optimizer options: each throws ConfigError naming `where`.key.
struct OptionChecks {
  std::string where;
  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;
  void learning_rate(double lr) const;                  // > 0
  void fraction(const char* key, double value) const;   // in [0, 1)
  void non_negative(const char* key, double value) const;
};

/// Throws ConfigError naming `where`.momentum when a bound optimizer's momentum would be
/// switched on or off: its buffer is state that checkpoints and population partners hold.
void check_momentum_switch(bool bound, double momentum, double value, const std::string& where);

/// An optimizer's numeric options by config key, for hyperparameters() and
/// set_hyperparameter(): each key with the member of the options struct it names.
template <class Options>
using HyperparameterFields = std::vector<std::pair<const char*, double Options::*>>;

template <class Options>
std::map<std::string, double> hyperparameter_values(const Options& options, const HyperparameterFields<Options>& fields) {
  std::map<std::string, double> values;
  for (const auto& [key, member] : fields) values[key] = options.*member;
  return values;
}

/// `options` with `key` set to `value` and checked by `check(changed, where)`; throws
/// ConfigError naming `where`.key (and the keys `optimizer` has) for a key not in `fields`.
template <class Options, class Check>
Options with_hyperparameter(const Options& options, const HyperparameterFields<Options>& fields, const std::string& key,
                            double value, const std::string& where, const std::string& optimizer, Check check) {
  Options changed = options;
  std::string known;
  for (const auto& [name, member] : fields) {
    known += (known.empty() ? "" : ", ") + std::string(name);
    if (key == name) {
      changed.*member = value;
      check(changed, where);
      return changed;
    }
  }
  throw ConfigError(where + "." + key, optimizer + " has no such hyper-parameter (it has " + known + ")");
}
}  // namespace detail

}  // namespace tessera::optim
