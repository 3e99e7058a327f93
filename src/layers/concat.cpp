#include "tessera/layers/concat.hpp"

#include "tessera/backends/kokkos/elementwise_kernels.hpp"
#include "tessera/core/error.hpp"

namespace tessera::layers {

std::unique_ptr<Layer> Concat::from_json(const std::string& name, ConfigObject& /*cfg*/, int /*spatial_rank*/) {
  return std::make_unique<Concat>(name);
}

Shape Concat::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() >= 2, where() + ": expected two or more inputs, got " + std::to_string(inputs.size()));
  const Shape& first = inputs[0];
  require_shape(first.rank() >= 1, where() + ": cannot concatenate scalars");
  const int last = first.rank() - 1;
  Shape out = first;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Shape& s = inputs[i];
    bool fits = s.rank() == first.rank();
    for (int d = 0; fits && d < last; ++d) fits = s[d] == first[d];
    require_shape(fits, where() + ": input " + std::to_string(i) + " has shape " + s.str() + " but input 0 has " +
                            first.str() + "; all dimensions but the channel (last) one must be equal");
    out[last] += s[last];
  }
  return out;
}

void Concat::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  int64_t offset = 0;
  for (const Tensor& x : inputs) {
    kokkos_backend::copy_channels(x, output, offset, true);
    offset += x.shape()[x.shape().rank() - 1];
  }
}

void Concat::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                      const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  int64_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!grad_inputs.at(i).empty()) kokkos_backend::copy_channels(grad_inputs[i], grad_output, offset, false);
    offset += inputs[i].shape()[inputs[i].shape().rank() - 1];
  }
}

}  // namespace tessera::layers
