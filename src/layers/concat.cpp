#include "tessera/layers/concat.hpp"

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/channel_split.hpp"

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

void Concat::reshape(const std::vector<Shape>& inputs) {
  inputs_.clear();
  if (!grid().distribution().splits_channels()) return;
  auto whole = [&](const Shape& all) {
    Whole w;
    const ElementType type = context().precision;
    w.exchange = parallel::ChannelExchange(grid(), all, where(), type);
    w.value = Tensor(all, type, "tessera::concat_whole");
    w.grad = Tensor(all, type, "tessera::concat_whole_grad");
    return w;
  };
  std::vector<Shape> wholes;
  for (size_t k = 0; k < inputs.size(); ++k) wholes.push_back(whole_channels(inputs[k], k));
  for (const Shape& s : wholes) inputs_.push_back(whole(s));
  output_ = whole(output_shape(wholes));
}

namespace {
/// Each input's first channel in the concatenation.
std::vector<int64_t> channel_offsets(const std::vector<Tensor>& inputs) {
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (const Tensor& x : inputs) {
    offsets.push_back(offset);
    offset += x.shape()[x.shape().rank() - 1];
  }
  return offsets;
}
}  // namespace

void Concat::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  const bool split = !inputs_.empty();
  if (!split) {
    kokkos_backend::copy_channel_blocks(inputs, channel_offsets(inputs), output, true);
    return;
  }
  const Tensor& out = split ? output_.value : output;
  int64_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor* x = &inputs[i];
    if (split) {
      inputs_[i].exchange.gather(inputs[i], inputs_[i].value);
      x = &inputs_[i].value;
    }
    kokkos_backend::copy_channels(*x, out, offset, true);
    offset += x->shape()[x->shape().rank() - 1];
  }
  if (split) kokkos_backend::copy_channels(output, out, grid().first_channel(offset, where()), false);
}

void Concat::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                      const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  const bool split = !inputs_.empty();
  if (!split) {
    kokkos_backend::copy_channel_blocks(grad_inputs, channel_offsets(inputs), grad_output, false);
    return;
  }
  const Tensor* dy = &grad_output;
  if (split) {
    output_.exchange.gather(grad_output, output_.grad);
    dy = &output_.grad;
  }
  int64_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int64_t channels = split ? inputs_[i].value.shape()[inputs_[i].value.shape().rank() - 1]
                                   : inputs[i].shape()[inputs[i].shape().rank() - 1];
    if (!grad_inputs.at(i).empty()) {
      if (split) {
        // This input's whole gradient, then the slice this rank holds of it.
        kokkos_backend::copy_channels(inputs_[i].grad, *dy, offset, false);
        kokkos_backend::copy_channels(grad_inputs[i], inputs_[i].grad, grid().first_channel(channels, where()), false);
      } else {
        kokkos_backend::copy_channels(grad_inputs[i], *dy, offset, false);
      }
    }
    offset += channels;
  }
}

}  // namespace tessera::layers
