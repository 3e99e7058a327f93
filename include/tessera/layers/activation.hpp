#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/ops/eltwise.hpp"

namespace tessera::layers {

/// A pointwise activation of any shape: "relu", "leaky_relu" (key "alpha", the negative
/// slope, 0.01), "elu" (key "alpha", 1.0), "tanh", or "scale" (key "factor", 1.0: y = factor·x,
/// a fixed output scale such as CosmoFlow's 1.2 after tanh). Backward uses the forward input.
class Activation final : public Layer {
 public:
  Activation(std::string name, ops::EltwiseDesc desc);
  /// One factory per kind: Activation::from_json<ops::EltwiseKind::relu> etc.
  template <ops::EltwiseKind Kind>
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override;
  /// Pointwise: each rank works on its own block.
  bool supports_spatial_split() const override { return true; }
  /// Per channel: a slice of the channels runs alone.
  bool supports_channel_split() const override { return true; }
  const ops::EltwiseDesc& desc() const { return desc_; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  std::string backend() const override;
  /// ReLU, LeakyReLU and ELU with alpha >= 0 (what from_json accepts), tanh and a scale by
  /// factor >= 0 are non-decreasing.
  bool commutes_with_max_pool() const override { return desc_.alpha >= 0.0f; }

 private:
  ops::EltwiseDesc desc_;
  std::unique_ptr<ops::EltwiseOp> op_;
};

extern template std::unique_ptr<Layer> Activation::from_json<ops::EltwiseKind::relu>(const std::string&, ConfigObject&,
                                                                                     int);
extern template std::unique_ptr<Layer> Activation::from_json<ops::EltwiseKind::leaky_relu>(const std::string&,
                                                                                           ConfigObject&, int);
extern template std::unique_ptr<Layer> Activation::from_json<ops::EltwiseKind::elu>(const std::string&, ConfigObject&,
                                                                                    int);
extern template std::unique_ptr<Layer> Activation::from_json<ops::EltwiseKind::tanh>(const std::string&, ConfigObject&,
                                                                                     int);
extern template std::unique_ptr<Layer> Activation::from_json<ops::EltwiseKind::scale>(const std::string&, ConfigObject&,
                                                                                      int);

}  // namespace tessera::layers
