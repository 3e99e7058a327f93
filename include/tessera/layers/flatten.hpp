#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/parallel/spatial_gather.hpp"

namespace tessera::layers {

/// Flattens [N, ...] to [N, product of the rest] ("flatten", no keys). The features keep the
/// channels-last order (D, H, W, C), not PyTorch's (C, D, H, W): only weights ported to or
/// from a PyTorch model's following dense layer need their columns permuted. Under a spatial
/// split it gathers each sample's blocks, so the features and the layers after it are
/// replicated on every rank of the spatial group.
class Flatten final : public Layer {
 public:
  explicit Flatten(std::string name) : Layer(std::move(name)) {}
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return "flatten"; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  /// Splits in space only.
  LayerTraits traits() const override {
    LayerTraits t;
    t.spatial_split = true;
    return t;
  }
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;

 private:
  std::unique_ptr<parallel::SpatialGather> gather_;  // when the input is split in space
};

}  // namespace tessera::layers
