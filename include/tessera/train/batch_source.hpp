#pragma once
#include <cstdint>

#include "tessera/core/tensor.hpp"

namespace tessera::train {

/// Where a training step's inputs and targets come from when they are not fixed samples of a
/// dataset but depend on what the model predicted before: a flood-filling network's next field
/// of view holds its own last prediction and lies where that prediction moved it. A Trainer
/// given one (Trainer::set_training_source) asks it for every micro-batch instead of reading
/// the batch plan's samples, and shows it the model's output after each forward pass. It fills
/// this rank's rows only; what the rows hold over all ranks is the source's to decide.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  /// Fills this rank's rows of micro-batch `micro` of step `step` (tensors of
  /// Trainer::local_input_shape / local_target_shape).
  virtual void load(int64_t step, int64_t micro, const Tensor& inputs, const Tensor& targets) = 0;
  /// The model's output for the rows load() gave last, after the forward pass and before the
  /// backward one.
  virtual void observe(const Tensor& predictions) = 0;
};

}  // namespace tessera::train
