#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"

namespace tessera::layers {

/// Flattens [N, ...] to [N, product of the rest] ("flatten", no keys). The features keep the
/// channels-last order (D, H, W, C), not PyTorch's (C, D, H, W): only weights ported to or
/// from a PyTorch model's following dense layer need their columns permuted.
class Flatten final : public Layer {
 public:
  explicit Flatten(std::string name) : Layer(std::move(name)) {}
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return "flatten"; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
};

}  // namespace tessera::layers
