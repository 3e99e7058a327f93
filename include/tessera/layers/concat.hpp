#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"

namespace tessera::layers {

/// Concatenation of two or more inputs along the channel (last) dimension ("concat", no
/// keys), e.g. a U-Net skip connection; all other dimensions must be equal.
class Concat final : public Layer {
 public:
  explicit Concat(std::string name) : Layer(std::move(name)) {}
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return "concat"; }
  /// Blocks of equally distributed inputs line up.
  bool supports_spatial_split() const override { return true; }
  int num_inputs() const override { return -1; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
};

}  // namespace tessera::layers
