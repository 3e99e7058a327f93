#include "tessera/layers/activation.hpp"

#include "tessera/core/error.hpp"

namespace tessera::layers {

Activation::Activation(std::string name, ops::EltwiseDesc desc) : Layer(std::move(name)), desc_(desc) {}

std::unique_ptr<Layer> Activation::from_config(ops::EltwiseKind kind, const std::string& name, ConfigObject& cfg) {
  ops::EltwiseDesc desc;
  desc.kind = kind;
  const ops::ActivationKey& key = ops::activation_info(kind).key;
  if (key.name) desc.alpha = static_cast<float>(cfg.number_in(key.name, key.min, key.max, key.fallback));
  return std::make_unique<Activation>(name, desc);
}

std::string Activation::type() const { return ops::activation_info(desc_.kind).name; }

LayerTraits Activation::traits() const {
  LayerTraits t;
  t.spatial_split = true;
  t.channel_split = true;
  t.commutes_with_max_pool = ops::activation_info(desc_.kind).non_decreasing(desc_.alpha);
  t.op_kinds = {ops::OpKind::eltwise};
  // Every activation runs in 16 bits: as a oneDNN eltwise primitive where oneDNN has it, else
  // as the Kokkos kernel (which widens each value and computes in fp32).
  t.precisions.push_back(ElementType::bf16);
  t.precisions.push_back(ElementType::fp16);
  return t;
}

std::optional<LayerOp> Activation::backend_op(const std::vector<Shape>& inputs) const {
  LayerOp op;
  op.kind = ops::OpKind::eltwise;
  op.eltwise = desc_;
  op.eltwise.type = context().precision;  // desc_ has it once reshape made the op
  op.eltwise_elements = inputs.at(0).numel();
  return op;
}

Shape Activation::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  return inputs[0];
}

void Activation::reshape(const std::vector<Shape>& /*inputs*/) {
  // The op depends only on the activation, so one instance serves every input shape.
  if (!op_) {
    desc_.type = context().precision;
    op_ = op_factory().eltwise(desc_, name());
  }
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
