#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tessera/core/config.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/layers/value_domain.hpp"

namespace tessera::layers {

/// What one process contributes to a step's loss and accuracy; sums over ranks give the
/// global values (mean loss = loss_sum / global batch, accuracy = correct / predictions).
struct LossSums {
  double loss_sum = 0;
  int64_t correct = 0;
  int64_t predictions = 0;
};

/// A training objective on the model's output (not a layer: it has a target and ends the graph).
///  - "mse": per-sample loss = mean over the sample's elements of (prediction − target)², so
///    the batch mean equals PyTorch's MSELoss(reduction="mean").
///  - "softmax_cross_entropy": softmax along the channel (last) dimension of logits
///    [N, classes] or [N, (D,) H, W, classes]; targets are class indices stored as floats, one
///    per row ([N] or [N, (D,) H, W], optionally with a trailing 1). Per-sample loss = mean
///    over the sample's voxels (or its single row); `correct`/`predictions` count arg-max hits
///    and rows.
///  - "sigmoid_cross_entropy": binary cross-entropy on logits, element by element, against
///    targets in [0, 1] of the logits' shape (PyTorch's BCEWithLogitsLoss); per-sample loss =
///    mean over the sample's elements; `correct`/`predictions` count elements on the target's
///    side of probability 0.5, and elements.
class Loss {
 public:
  virtual ~Loss();
  virtual std::string type() const = 0;
  /// Shape the targets must have for predictions of shape `prediction`.
  virtual Shape target_shape(const Shape& prediction) const = 0;
  /// The values its targets must hold for predictions of shape `prediction` (class indices,
  /// probabilities); none when any finite value will do.
  virtual std::optional<ValueDomain> target_domain(const Shape& /*prediction*/) const { return std::nullopt; }
  /// Σ over this process's samples of the per-sample loss; if `grad` is not empty it receives
  /// ∂(Σ_samples loss)/∂prediction divided by `global_batch` (so summing grads over ranks gives
  /// the gradient of the mean loss over the global batch). Under a spatial split this process
  /// holds a block of each of its samples, and each whole sample is `sample_parts` times its
  /// block (the whole's elements over the block's; blocks may differ in size): the sums are
  /// its blocks' shares, which add up over the spatial group.
  virtual LossSums evaluate(const Tensor& prediction, const Tensor& target, int64_t global_batch, const Tensor& grad,
                            double sample_parts = 1) = 0;
  /// Reads "type" ("mse" | "softmax_cross_entropy" | "sigmoid_cross_entropy"); the caller
  /// calls cfg.finish().
  static std::unique_ptr<Loss> from_json(ConfigObject& cfg);
  /// The loss of that type, for programs that build a run in C++; an unknown type is a
  /// ConfigError naming `where`.
  static std::unique_ptr<Loss> make(const std::string& type, const std::string& where = "loss type");
};

}  // namespace tessera::layers
