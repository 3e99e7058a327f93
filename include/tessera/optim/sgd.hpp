#pragma once
#include "tessera/optim/optimizer.hpp"

namespace tessera::optim {

/// Hyper-parameters of SGD, with torch.optim.SGD's meaning and defaults (lr has none).
struct SgdOptions {
  double lr = 0.0;            // > 0
  double momentum = 0.0;      // [0, 1)
  double dampening = 0.0;     // [0, 1]
  bool nesterov = false;      // needs momentum > 0 and dampening 0
  double weight_decay = 0.0;  // >= 0, L2 added to the gradient
};

/// Stochastic gradient descent with momentum, Nesterov momentum and L2 weight decay, step for
/// step the same update as torch.optim.SGD:
///   g = grad + weight_decay·p
///   buf = g on the first step, else momentum·buf + (1 − dampening)·g
///   p −= lr · (nesterov ? g + momentum·buf : buf)      (p −= lr·g without momentum)
class Sgd final : public Optimizer {
 public:
  /// Throws ConfigError naming `where` + ".<key>" for an out-of-range option.
  explicit Sgd(const SgdOptions& options, const std::string& where = "sgd");

  std::string type() const override { return "sgd"; }
  void bind(const Tensor& values, const Tensor& grads) override;
  void step(float lr) override;
  /// {"sgd.momentum", buffer} with momentum, else nothing.
  std::vector<std::pair<std::string, Tensor>> state() override;
  int64_t steps() const override { return steps_; }
  void set_steps(int64_t steps) override;
  double base_lr() const override { return options_.lr; }
  std::string str() const override;
  std::map<std::string, double> hyperparameters() const override;
  void set_hyperparameter(const std::string& key, double value, const std::string& where) override;
  const SgdOptions& options() const { return options_; }

  /// Reads lr (required), momentum, dampening, nesterov, weight_decay from `cfg` (not "type",
  /// and without finish(), which the caller does).
  static std::unique_ptr<Sgd> from_json(ConfigObject& cfg);

 private:
  SgdOptions options_;
  Tensor values_, grads_, momentum_;
  int64_t numel_ = 0;
  int64_t steps_ = 0;
  bool bound_ = false;
};

}  // namespace tessera::optim
