#include "tessera/layers/redistribute.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera::layers {

Shape Redistribute::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  return inputs[0];
}

void Redistribute::reshape(const std::vector<Shape>& inputs) {
  const Shape& local = inputs.at(0);
  // The input is held under from_, not this layer's grid: without the model's global shape,
  // it is the even split's inverse under from_.
  const Shape global =
      batch() > 0 ? global_shape(local) : from_.global_shape(local, local[0] * from_.distribution().sample);
  const int64_t batch = global[0];
  // The plan holds every rank's block: new shares move other ranks' blocks even where this
  // rank's stays the same.
  const uint64_t shares = from_.shares()->version();
  if (move_ && local == input_ && batch == input_batch_ && shares == shares_version_) return;
  move_ = std::make_unique<parallel::Redistribution>(from_, grid(), global, where(), context().precision);
  input_ = local;
  input_batch_ = batch;
  shares_version_ = shares;
}

void Redistribute::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  move_->forward(inputs.at(0), output);
}

void Redistribute::backward(const std::vector<Tensor>& /*inputs*/, const Tensor& /*output*/, const Tensor& grad_output,
                            const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  if (!grad_inputs.at(0).empty()) move_->backward(grad_output, grad_inputs[0]);
}

}  // namespace tessera::layers
