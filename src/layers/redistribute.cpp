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
  if (move_ && local == input_) return;
  const Shape global = from_.global_shape(local);
  move_ = std::make_unique<parallel::Redistribution>(from_, grid(), global, where(), context().precision);
  input_ = local;
}

void Redistribute::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  move_->forward(inputs.at(0), output);
}

void Redistribute::backward(const std::vector<Tensor>& /*inputs*/, const Tensor& /*output*/, const Tensor& grad_output,
                            const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  if (!grad_inputs.at(0).empty()) move_->backward(grad_output, grad_inputs[0]);
}

}  // namespace tessera::layers
