#include "tessera/layers/add.hpp"

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/error.hpp"

namespace tessera::layers {

std::unique_ptr<Layer> Add::from_json(const std::string& name, ConfigObject& /*cfg*/, int /*spatial_rank*/) {
  return std::make_unique<Add>(name);
}

Shape Add::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() >= 2, where() + ": expected two or more inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 1; i < inputs.size(); ++i)
    require_shape(inputs[i] == inputs[0], where() + ": input " + std::to_string(i) + " has shape " + inputs[i].str() +
                                              " but input 0 has shape " + inputs[0].str());
  return inputs[0];
}

void Add::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  kokkos_backend::add(inputs.at(0), inputs.at(1), output);
  for (size_t i = 2; i < inputs.size(); ++i) kokkos_backend::accumulate(inputs[i], output);
}

void Add::backward(const std::vector<Tensor>& /*inputs*/, const Tensor& /*output*/, const Tensor& grad_output,
                   const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  for (const Tensor& dx : grad_inputs)
    if (!dx.empty()) deep_copy(dx, grad_output);
}

}  // namespace tessera::layers
