#include "tessera/layers/activation.hpp"

#include "tessera/core/error.hpp"

namespace tessera::layers {

Activation::Activation(std::string name, ops::EltwiseDesc desc) : Layer(std::move(name)), desc_(desc) {}

template <ops::EltwiseKind Kind>
std::unique_ptr<Layer> Activation::from_json(const std::string& name, ConfigObject& cfg, int /*spatial_rank*/) {
  ops::EltwiseDesc desc;
  desc.kind = Kind;
  if (Kind == ops::EltwiseKind::leaky_relu) desc.alpha = static_cast<float>(cfg.number_in("alpha", 0.0, 1.0, 0.01));
  if (Kind == ops::EltwiseKind::elu) desc.alpha = static_cast<float>(cfg.number_in("alpha", 0.0, 1e6, 1.0));
  if (Kind == ops::EltwiseKind::scale) desc.alpha = static_cast<float>(cfg.number_in("factor", -1e6, 1e6, 1.0));
  return std::make_unique<Activation>(name, desc);
}

template std::unique_ptr<Layer> Activation::from_json<ops::EltwiseKind::relu>(const std::string&, ConfigObject&, int);
template std::unique_ptr<Layer> Activation::from_json<ops::EltwiseKind::leaky_relu>(const std::string&, ConfigObject&,
                                                                                    int);
template std::unique_ptr<Layer> Activation::from_json<ops::EltwiseKind::elu>(const std::string&, ConfigObject&, int);
template std::unique_ptr<Layer> Activation::from_json<ops::EltwiseKind::tanh>(const std::string&, ConfigObject&, int);
template std::unique_ptr<Layer> Activation::from_json<ops::EltwiseKind::scale>(const std::string&, ConfigObject&, int);

std::string Activation::type() const {
  switch (desc_.kind) {
    case ops::EltwiseKind::leaky_relu:
      return "leaky_relu";
    case ops::EltwiseKind::elu:
      return "elu";
    case ops::EltwiseKind::tanh: return "tanh";
    case ops::EltwiseKind::scale: return "scale";
    default:
      return "relu";
  }
}

Shape Activation::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  return inputs[0];
}

void Activation::reshape(const std::vector<Shape>& /*inputs*/) {
  // The op depends only on the activation, so one instance serves every input shape.
  if (!op_) op_ = op_factory().eltwise(desc_, name());
}

std::string Activation::backend() const { return op_ ? op_->backend() : ""; }

void Activation::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  op_->forward(inputs.at(0), output);
}

void Activation::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                          const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  if (grad_inputs.at(0).empty()) return;
  op_->backward(inputs.at(0), grad_output, grad_inputs[0]);
}

}  // namespace tessera::layers
