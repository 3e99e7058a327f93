#include "tessera/layers/loss.hpp"

#include <vector>

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/error.hpp"

namespace tessera::layers {
namespace {

void require_batch(const Shape& prediction, int64_t global_batch, const std::string& loss) {
  require_shape(prediction.rank() >= 2 && prediction[0] > 0,
                loss + " loss: expected predictions [N, ...] with N > 0, got " + prediction.str());
  require_shape(global_batch >= prediction[0], loss + " loss: global batch " + std::to_string(global_batch) +
                                                   " is smaller than this process's " + std::to_string(prediction[0]) +
                                                   " samples");
}

/// For the losses whose target has the prediction's shape and whose per-sample loss is the
/// mean over the sample's elements: checks both and returns how many elements that is (a
/// sample `sample_parts` times the block counted whole). `prediction_name` names the
/// prediction in the mismatch message ("prediction", "logits").
double elements_per_sample(const Shape& p, const Tensor& target, int64_t global_batch, double sample_parts,
                           const std::string& loss, const char* prediction_name) {
  require_batch(p, global_batch, loss);
  require_shape(target.shape() == p, loss + " loss: target of shape " + target.shape().str() + " does not match " +
                                         prediction_name + " " + p.str());
  return static_cast<double>(p.numel() / p[0]) * sample_parts;
}

/// The factor each process's gradient carries: 1/global batch, so the sum over ranks is the
/// gradient of the mean loss over the whole batch.
float gradient_scale(int64_t global_batch) { return static_cast<float>(1.0 / static_cast<double>(global_batch)); }

class MeanSquaredError final : public Loss {
 public:
  std::string type() const override { return "mse"; }
  Shape target_shape(const Shape& prediction) const override { return prediction; }

  LossSums evaluate(const Tensor& prediction, const Tensor& target, int64_t global_batch, const Tensor& grad,
                    double sample_parts) override {
    const double per_sample =
        elements_per_sample(prediction.shape(), target, global_batch, sample_parts, type(), "prediction");
    LossSums sums;
    sums.loss_sum = kokkos_backend::mse_loss(prediction, target, per_sample, gradient_scale(global_batch), grad);
    return sums;
  }
};

class SoftmaxCrossEntropy final : public Loss {
 public:
  std::string type() const override { return "softmax_cross_entropy"; }

  Shape target_shape(const Shape& prediction) const override {
    std::vector<int64_t> dims = prediction.dims();
    if (!dims.empty()) dims.pop_back();
    return Shape(dims);
  }

  std::optional<ValueDomain> target_domain(const Shape& prediction) const override {
    if (prediction.rank() == 0) return std::nullopt;
    return ValueDomain{0, static_cast<double>(prediction[prediction.rank() - 1] - 1), true};
  }

  LossSums evaluate(const Tensor& prediction, const Tensor& target, int64_t global_batch, const Tensor& grad,
                    double sample_parts) override {
    const Shape& p = prediction.shape();
    require_batch(p, global_batch, type());
    require_shape(fits(p, target.shape()), "softmax_cross_entropy loss: target of shape " + target.shape().str() +
                                               " does not hold one class index per row of logits " + p.str() +
                                               " (expected " + target_shape(p).str() + ")");
    const int64_t rows = p.numel() / p[p.rank() - 1];
    const double rows_per_sample = static_cast<double>(rows / p[0]) * sample_parts;
    LossSums sums;
    sums.loss_sum = kokkos_backend::softmax_cross_entropy(prediction, target, rows_per_sample,
                                                          gradient_scale(global_batch), grad, sums.correct);
    sums.predictions = rows;
    return sums;
  }

 private:
  // Labels are either the logits' shape without the class dimension, or that with a trailing 1.
  bool fits(const Shape& prediction, const Shape& target) const {
    const Shape rows = target_shape(prediction);
    if (target == rows) return true;
    std::vector<int64_t> with_one = rows.dims();
    with_one.push_back(1);
    return target == Shape(with_one);
  }
};

/// Per-element binary cross-entropy on logits against targets in [0, 1]: per-sample loss =
/// mean over the sample's elements, as MeanSquaredError's, so the batch mean equals PyTorch's
/// BCEWithLogitsLoss(reduction="mean"). `correct`/`predictions` count the elements whose
/// logit's sign (probability above or below 0.5) agrees with the target.
class SigmoidCrossEntropy final : public Loss {
 public:
  std::string type() const override { return "sigmoid_cross_entropy"; }
  Shape target_shape(const Shape& prediction) const override { return prediction; }
  std::optional<ValueDomain> target_domain(const Shape& /*prediction*/) const override {
    return ValueDomain{0, 1, false};
  }

  LossSums evaluate(const Tensor& prediction, const Tensor& target, int64_t global_batch, const Tensor& grad,
                    double sample_parts) override {
    const double per_sample =
        elements_per_sample(prediction.shape(), target, global_batch, sample_parts, type(), "logits");
    LossSums sums;
    sums.loss_sum = kokkos_backend::sigmoid_cross_entropy(prediction, target, per_sample,
                                                          gradient_scale(global_batch), grad, sums.correct);
    sums.predictions = prediction.numel();
    return sums;
  }
};

}  // namespace

Loss::~Loss() = default;

std::unique_ptr<Loss> Loss::from_json(ConfigObject& cfg) { return make(cfg.string("type"), cfg.path_of("type")); }

std::unique_ptr<Loss> Loss::make(const std::string& type, const std::string& where) {
  if (type == "mse") return std::make_unique<MeanSquaredError>();
  if (type == "softmax_cross_entropy") return std::make_unique<SoftmaxCrossEntropy>();
  if (type == "sigmoid_cross_entropy") return std::make_unique<SigmoidCrossEntropy>();
  throw ConfigError(where,
                    "unknown loss \"" + type + "\"; expected one of: mse, softmax_cross_entropy, sigmoid_cross_entropy");
}

}  // namespace tessera::layers
