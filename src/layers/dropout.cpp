#include "tessera/layers/dropout.hpp"

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::layers {

Dropout::Dropout(std::string name, float rate) : Layer(std::move(name)), rate_(rate) {}

std::unique_ptr<Layer> Dropout::from_json(const std::string& name, ConfigObject& cfg, int /*spatial_rank*/) {
  const double rate = cfg.number_in("rate", 0.0, 1.0, 0.5);
  if (rate >= 1.0) throw ConfigError(cfg.path_of("rate"), "must be below 1 (a rate of 1 drops everything)");
  return std::make_unique<Dropout>(name, static_cast<float>(rate));
}

Shape Dropout::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  return inputs[0];
}

kokkos_backend::BlockPlacement Dropout::placement(const Tensor& t, const StepInfo& step) const {
  kokkos_backend::BlockPlacement placed;
  // A step without its global batch (a layer run alone) is one whole batch on this rank.
  placed.first_sample = step.batch > 0 ? grid().first_sample(step.batch, where()) : 0;
  if (grid().distribution().is_spatial() && t.shape().rank() > 2) {
    placed.sample = parallel::spatial_size_of(global_shape(t.shape()));
    placed.offset = grid().local_box(placed.sample, where()).offset;
  }
  if (grid().distribution().splits_channels()) {
    // Whole samples, but a slice of their channels: place the block by sample and channel.
    if (placed.sample[0] == 0)
      placed.sample = t.shape().rank() > 2 ? parallel::spatial_size_of(t.shape()) : std::array<int64_t, 3>{1, 1, 1};
    placed.channels = global_shape(t.shape())[t.shape().rank() - 1];
    placed.first_channel = grid().first_channel(placed.channels, where());
  }
  return placed;
}

uint64_t Dropout::stream(const StepInfo& step) const {
  // The step is folded into the stream (the seed stays the run's), so each (layer, step)
  // draws an unrelated mask.
  return rng::mix(rng::stream_of(name()) + rng::mix(static_cast<uint64_t>(step.step)));
}

void Dropout::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) {
  if (step.mode == Mode::inference || rate_ == 0.0f) {
    deep_copy(output, inputs.at(0));
    return;
  }
  kokkos_backend::dropout_forward(inputs.at(0), rate_, context().seed, stream(step), output,
                                  placement(inputs.at(0), step));
}

void Dropout::backward(const std::vector<Tensor>& /*inputs*/, const Tensor& /*output*/, const Tensor& grad_output,
                       const std::vector<Tensor>& grad_inputs, const StepInfo& step) {
  const Tensor& dx = grad_inputs.at(0);
  if (dx.empty()) return;
  if (step.mode == Mode::inference || rate_ == 0.0f) {
    deep_copy(dx, grad_output);
    return;
  }
  kokkos_backend::dropout_backward(grad_output, rate_, context().seed, stream(step), dx, placement(grad_output, step));
}

}  // namespace tessera::layers
