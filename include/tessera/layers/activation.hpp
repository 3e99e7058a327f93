#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/ops/eltwise.hpp"

namespace tessera::layers {

/// A pointwise activation of any shape, one of the table's rows (ops/activations.hpp: "relu",
/// "leaky_relu", "elu", "tanh", "scale"), whose row names its key, its range and default.
/// Backward uses the forward input.
class Activation final : public Layer {
 public:
  Activation(std::string name, ops::EltwiseDesc desc);
  /// One factory per kind: Activation::from_json<ops::EltwiseKind::relu> etc.
  template <ops::EltwiseKind Kind>
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int /*spatial_rank*/) {
    return from_config(Kind, name, cfg);
  }
  /// The activation `kind` reading its row's key from `cfg`.
  static std::unique_ptr<Layer> from_config(ops::EltwiseKind kind, const std::string& name, ConfigObject& cfg);

  std::string type() const override;
  /// Pointwise and per channel: each rank works on its own block, in space or over channels.
  /// It commutes with max pooling where its row says it is non-decreasing for its key.
  LayerTraits traits() const override;
  std::optional<LayerOp> backend_op(const std::vector<Shape>& inputs) const override;
  const ops::EltwiseDesc& desc() const { return desc_; }
  const ops::EltwiseDesc* activation_desc() const override { return &desc_; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  std::string backend() const override;

 private:
  ops::EltwiseDesc desc_;
  std::unique_ptr<ops::EltwiseOp> op_;
};

}  // namespace tessera::layers
