#pragma once
#include "tessera/optim/layerwise_optimizer.hpp"

namespace tessera::optim {

/// Hyper-parameters of LAMB, with the defaults of You et al. (2019). The differences from
/// timm's Lamb (which clips the global gradient norm, for one) are listed in docs/config.md.
struct LambOptions {
  double lr = 1e-3;                   // > 0
  double beta1 = 0.9;                 // [0, 1)
  double beta2 = 0.999;               // [0, 1)
  double epsilon = 1e-6;              // >= 0
  double weight_decay = 0.01;         // >= 0, decoupled (added to the Adam step, not the gradient)
  bool exclude_bias_and_norm = true;  // one-dimensional tensors: no trust ratio, no decay
};

/// LAMB (You et al., "Large Batch Optimization for Deep Learning: Training BERT in 76
/// minutes", 2019): Adam's bias-corrected step plus decoupled weight decay, rescaled per
/// parameter tensor by the ratio of the tensor's norm to the step's. With t = steps() + 1,
/// per element
///   m = beta1·m + (1 − beta1)·g,   v = beta2·v + (1 − beta2)·g²
///   u = (m / (1 − beta1^t)) / (sqrt(v / (1 − beta2^t)) + epsilon) + weight_decay·w
/// and per tensor (norms over the whole tensor, also when it is split over ranks)
///   r = ‖w‖ / ‖u‖   (r = 1 if either is 0),   w −= lr·r·u.
/// With exclude_bias_and_norm, one-dimensional tensors (biases, batch-norm scale and shift)
/// take r = 1 and no decay: an Adam step.
class Lamb final : public LayerwiseOptimizer {
 public:
  /// Throws ConfigError naming `where` + ".<key>" for an out-of-range option.
  explicit Lamb(const LambOptions& options, const std::string& where = "lamb");

  std::string type() const override { return "lamb"; }
  void bind(const Tensor& values, const Tensor& grads) override;
  void step(float lr) override;
  /// {"lamb.m", first moment}, {"lamb.v", second moment}.
  std::vector<std::pair<std::string, Tensor>> state() override;
  int64_t steps() const override { return steps_; }
  void set_steps(int64_t steps) override;
  double base_lr() const override { return options_.lr; }
  std::string str() const override;
  std::map<std::string, double> hyperparameters() const override;
  void set_hyperparameter(const std::string& key, double value, const std::string& where) override;
  const LambOptions& options() const { return options_; }
  /// The trust ratios r of the last step, one per tensor (for logs and tests).
  const std::vector<double>& last_ratios() const { return ratios_; }

  /// Reads lr, beta1, beta2, epsilon, weight_decay, exclude_bias_and_norm from `cfg` (not
  /// "type", and without finish()).
  static std::unique_ptr<Lamb> from_json(ConfigObject& cfg);

 private:
  LambOptions options_;
  Tensor m_, v_;
  int64_t steps_ = 0;
  std::vector<double> ratios_;
};

}  // namespace tessera::optim
