#pragma once
#include "tessera/optim/optimizer.hpp"

namespace tessera::optim {

/// Hyper-parameters of Adam, with torch.optim.Adam's meaning and defaults.
struct AdamOptions {
  double lr = 1e-3;                     // > 0
  double beta1 = 0.9;                   // [0, 1)
  double beta2 = 0.999;                 // [0, 1)
  double epsilon = 1e-8;                // >= 0
  double weight_decay = 0.0;            // >= 0
  bool decoupled_weight_decay = false;  // true: AdamW (decay p directly, not through the gradient)
};

/// Adam, and AdamW with decoupled weight decay, step for step the same update as
/// torch.optim.Adam / torch.optim.AdamW. With t = steps() + 1:
///   g = grad (+ weight_decay·p unless decoupled; decoupled: p ← p·(1 − lr·weight_decay))
///   m = beta1·m + (1 − beta1)·g,   v = beta2·v + (1 − beta2)·g²
///   p −= lr / (1 − beta1^t) · m / (sqrt(v) / sqrt(1 − beta2^t) + epsilon)
class Adam final : public Optimizer {
 public:
  /// Throws ConfigError naming `where` + ".<key>" for an out-of-range option.
  explicit Adam(const AdamOptions& options, const std::string& where = "adam");

  std::string type() const override { return "adam"; }
  void bind(const Tensor& values, const Tensor& grads) override;
  void step(float lr) override;
  /// {"adam.m", first moment}, {"adam.v", second moment}.
  std::vector<std::pair<std::string, Tensor>> state() override;
  int64_t steps() const override { return steps_; }
  void set_steps(int64_t steps) override;
  double base_lr() const override { return options_.lr; }
  std::string str() const override;
  std::map<std::string, double> hyperparameters() const override;
  void set_hyperparameter(const std::string& key, double value, const std::string& where) override;
  const AdamOptions& options() const { return options_; }

  /// Reads lr, beta1, beta2, epsilon, weight_decay, decoupled_weight_decay from `cfg` (not
  /// "type", and without finish(), which the caller does).
  static std::unique_ptr<Adam> from_json(ConfigObject& cfg);

 private:
  AdamOptions options_;
  Tensor values_, grads_, m_, v_;
  int64_t numel_ = 0;
  int64_t steps_ = 0;
  bool bound_ = false;
};

}  // namespace tessera::optim
