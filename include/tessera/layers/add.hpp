#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"

namespace tessera::layers {

/// Elementwise sum of two or more inputs of identical shape ("add", no keys), e.g. a residual
/// connection.
class Add final : public Layer {
 public:
  explicit Add(std::string name) : Layer(std::move(name)) {}
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return "add"; }
  /// Split in space: blocks of equally distributed inputs line up. Over channels: elementwise,
  /// a slice of the channels runs alone.
  LayerTraits traits() const override {
    LayerTraits t;
    t.spatial_split = true;
    t.channel_split = true;
    t.precisions = {ElementType::fp32, ElementType::bf16, ElementType::fp16};
    return t;
  }
  int num_inputs() const override { return -1; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
};

}  // namespace tessera::layers
