#include "tessera/layers/flatten.hpp"

#include "tessera/core/error.hpp"

namespace tessera::layers {

std::unique_ptr<Layer> Flatten::from_json(const std::string& name, ConfigObject& /*cfg*/, int /*spatial_rank*/) {
  return std::make_unique<Flatten>(name);
}

Shape Flatten::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  const Shape& s = inputs[0];
  require_shape(s.rank() >= 1, where() + ": cannot flatten a scalar");
  const int64_t n = s[0];
  return Shape{n, n == 0 ? 0 : s.numel() / n};
}

void Flatten::reshape(const std::vector<Shape>& inputs) {
  const Shape& input = inputs.at(0);
  const bool split = grid().distribution().is_spatial() && input.rank() >= 4;
  if (!split) {
    gather_.reset();
  } else if (!gather_ || gather_->local_shape() != input) {
    gather_ = std::make_unique<parallel::SpatialGather>(grid(), input, parallel::spatial_size_of(global_shape(input)),
                                                        where());
  }
}

void Flatten::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  // Channels-last row-major data is already in flattened order: a plain copy, or the gather
  // of the blocks straight into it.
  if (gather_) {
    gather_->forward(inputs.at(0), output.reshaped(gather_->whole_shape()));
  } else {
    deep_copy(output, inputs.at(0));
  }
}

void Flatten::backward(const std::vector<Tensor>& /*inputs*/, const Tensor& /*output*/, const Tensor& grad_output,
                       const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  if (grad_inputs.at(0).empty()) return;
  if (gather_) {
    gather_->backward(grad_output.reshaped(gather_->whole_shape()), grad_inputs[0]);
  } else {
    deep_copy(grad_inputs[0], grad_output);
  }
}

}  // namespace tessera::layers
