#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"

namespace tessera::layers {

/// Inverted dropout ("dropout"; key "rate", 0.5, in [0, 1)): in training each element is
/// zeroed with probability `rate` and the rest scaled by 1/(1 − rate); in inference it is the
/// identity. The mask is a pure function of (context seed, layer name, step, element index),
/// so backward regenerates it instead of storing it and a rerun of a step reproduces it.
class Dropout final : public Layer {
 public:
  Dropout(std::string name, float rate);
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return "dropout"; }
  /// Split in space: masks follow each element's global index. Over channels: per channel, a
  /// slice of the channels runs alone.
  LayerTraits traits() const override {
    LayerTraits t;
    t.spatial_split = true;
    t.channel_split = true;
    return t;
  }
  float rate() const { return rate_; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;

 private:
  /// Global index of this rank's first element, so masks match whatever the rank count.
  kokkos_backend::BlockPlacement placement(const Tensor& t, const StepInfo& step) const;
  uint64_t stream(const StepInfo& step) const;

  float rate_;
};

}  // namespace tessera::layers
