#pragma once
#include "tessera/optim/layerwise_optimizer.hpp"

namespace tessera::optim {

/// Hyper-parameters of LARS, with the defaults of You et al. (2017); lr has none. The
/// differences from timm's Lars are listed in docs/config.md.
struct LarsOptions {
  double lr = 0.0;                  // > 0
  double momentum = 0.9;            // [0, 1)
  bool nesterov = false;            // needs momentum > 0
  double weight_decay = 0.0;        // >= 0
  double trust_coefficient = 0.001; // eta, > 0
  double epsilon = 1e-8;            // >= 0, keeps the ratio finite
  bool exclude_bias_and_norm = true;  // one-dimensional tensors: no trust ratio, no decay
};

/// Layer-wise Adaptive Rate Scaling (You, Gitman and Ginsburg, "Large Batch Training of
/// Convolutional Networks", 2017): momentum SGD whose step for each parameter tensor is
/// scaled by the ratio of the tensor's norm to its gradient's, so that no layer moves by more
/// than a fraction eta of its weights however large the global rate. Per tensor w with
/// gradient g (norms over the whole tensor, also when it is split over ranks):
///   r = eta·‖w‖ / (‖g‖ + weight_decay·‖w‖ + epsilon)   (r = 1 if ‖w‖ or ‖g‖ is 0)
///   d = r·(g + weight_decay·w)
///   buf = d on the first step, else momentum·buf + d
///   w −= lr · (nesterov ? d + momentum·buf : buf)
/// With exclude_bias_and_norm, one-dimensional tensors (biases, batch-norm scale and shift)
/// take d = g: plain momentum SGD, as You et al. and most ImageNet recipes do.
class Lars final : public LayerwiseOptimizer {
 public:
  /// Throws ConfigError naming `where` + ".<key>" for an out-of-range option.
  explicit Lars(const LarsOptions& options, const std::string& where = "lars");

  std::string type() const override { return "lars"; }
  void bind(const Tensor& values, const Tensor& grads) override;
  void step(float lr) override;
  /// {"lars.momentum", buffer} with momentum, else nothing.
  std::vector<std::pair<std::string, Tensor>> state() override;
  int64_t steps() const override { return steps_; }
  void set_steps(int64_t steps) override;
  double base_lr() const override { return options_.lr; }
  std::string str() const override;
  std::map<std::string, double> hyperparameters() const override;
  void set_hyperparameter(const std::string& key, double value, const std::string& where) override;
  const LarsOptions& options() const { return options_; }
  /// The trust ratios r of the last step, one per tensor (for logs and tests).
  const std::vector<double>& last_ratios() const { return ratios_; }

  /// Reads lr (required), momentum, nesterov, weight_decay, trust_coefficient, epsilon,
  /// exclude_bias_and_norm from `cfg` (not "type", and without finish()).
  static std::unique_ptr<Lars> from_json(ConfigObject& cfg);

 private:
  LarsOptions options_;
  Tensor momentum_;
  int64_t steps_ = 0;
  std::vector<double> ratios_;
};

}  // namespace tessera::optim
