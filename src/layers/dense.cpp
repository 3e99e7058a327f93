#include "tessera/layers/dense.hpp"

#include "tessera/core/error.hpp"
#include "tessera/ops/size_limits.hpp"

namespace tessera::layers {

Dense::Dense(std::string name, int64_t units, bool bias) : Layer(std::move(name)), units_(units), bias_enabled_(bias) {}

std::unique_ptr<Layer> Dense::from_json(const std::string& name, ConfigObject& cfg, int /*spatial_rank*/) {
  const int64_t units = cfg.integer_in("units", 1, ops::kMaxExtent);
  const bool bias = cfg.boolean("bias", true);
  return std::make_unique<Dense>(name, units, bias);
}

LayerTraits Dense::traits() const {
  LayerTraits t;
  t.spatial_split = true;
  t.channel_split = true;
  t.mixes_channels = true;
  t.output_channels_key = "units";
  t.op_kinds = {ops::OpKind::inner_product};
  t.precisions = {ElementType::fp32, ElementType::bf16, ElementType::fp16};
  return t;
}

std::optional<LayerOp> Dense::backend_op(const std::vector<Shape>& inputs) const {
  const Shape& x = inputs.at(0);
  LayerOp op;
  op.kind = ops::OpKind::inner_product;
  op.inner_product.batch = x[0];
  op.inner_product.in_features = x.numel() / x[0];
  op.inner_product.out_features = units_;
  op.inner_product.type = context().precision;
  return op;
}

Shape Dense::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  const Shape& s = inputs[0];
  require_shape(s.rank() == 2,
                where() + ": expected an input [N, features], got " + s.str() + "; add a \"flatten\" layer before it");
  return Shape{s[0], units_};
}

void Dense::declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) {
  output_shape(inputs);
  in_features_ = whole_channels(inputs[0])[1];
  const ParameterShard block = ChannelSplit::weight_shard(grid(), Shape{units_, in_features_}, 0, 1, where());
  weight_ = declare_shard(params, name() + ".weight", ShardedWeight::shard(grid(), block, where()), Init::weight,
                          in_features_, units_);
  if (bias_enabled_)
    bias_ = declare_shard(params, name() + ".bias", ChannelSplit::bias_shard(grid(), Shape{units_}, where()),
                          Init::bias, in_features_, units_);
}

void Dense::reshape(const std::vector<Shape>& inputs) {
  output_shape(inputs);
  const Shape whole = whole_channels(inputs[0]);
  require_shape(whole[1] == in_features_, where() + ": input " + whole.str() + " does not have the " +
                                              std::to_string(in_features_) + " features it was set up with");
  split_.reshape(grid(), whole, Shape{whole[0], units_}, where(), context().precision);
  weight_block_.reshape(grid(), weight_, where());
  ops::InnerProductGeometry g;
  g.batch = inputs[0][0];
  g.in_features = in_features_;
  g.out_features = units_;
  g.type = context().precision;
  // The op computes this rank's share: its units of all features, all units of its features,
  // or its column's units of its row's features.
  g.out_features = ChannelSplit::op_out_channels(grid(), g.out_features, where());
  g.in_features = ChannelSplit::op_in_channels(grid(), g.in_features, where());
  op_ = op_factory().inner_product(g, name());
}

std::string Dense::backend() const { return op_ ? op_->backend() : ""; }

double Dense::forward_flops(const std::vector<Shape>& inputs) const {
  const int64_t in = inputs.empty() || inputs[0].rank() != 2 ? in_features_ : inputs[0][1];
  return 2.0 * static_cast<double>(in) * static_cast<double>(units_);
}

void Dense::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  const Tensor bias = bias_ && ChannelSplit::owns_bias(grid()) ? bias_->value : Tensor();
  op_->forward(split_.op_input(inputs.at(0)), weight_block_.gather(), bias, split_.op_output(output));
  split_.finish_output(output);
}

void Dense::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                     const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  const Tensor& dy = split_.op_grad_output(grad_output);
  // The input gradient first: it is the last reader of a sharded weight's gathered block,
  // which then takes the weight gradient.
  const bool data = !grad_inputs.at(0).empty();
  if (data) op_->backward_data(dy, weight_block_.value(), split_.op_grad_input(grad_inputs[0]));
  op_->backward_weights(split_.saved_input(inputs.at(0)), dy, weight_block_.grad(), bias_ ? bias_->grad : Tensor());
  weight_block_.finish_grad();
  if (bias_ && !ChannelSplit::owns_bias(grid())) bias_->grad.zero();
  if (data) split_.finish_grad_input(grad_inputs[0]);
}

}  // namespace tessera::layers
