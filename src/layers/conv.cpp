#include "tessera/layers/conv.hpp"

#include "tessera/core/error.hpp"

namespace tessera::layers {

Conv::Conv(std::string name, const ConvOptions& options) : Layer(std::move(name)), options_(options) {}

std::unique_ptr<Layer> Conv::from_json(const std::string& name, ConfigObject& cfg, int spatial_rank) {
  if (spatial_rank != 2 && spatial_rank != 3)
    throw ConfigError(cfg.path(), "a convolution is 2D or 3D, got spatial rank " + std::to_string(spatial_rank));
  ConvOptions o;
  o.spatial_rank = spatial_rank;
  o.filters = cfg.integer("filters");
  if (o.filters < 1) throw ConfigError(cfg.path_of("filters"), "must be at least 1, got " + std::to_string(o.filters));
  o.kernel = cfg.spatial("kernel", spatial_rank, 3, 1, 1);
  o.stride = cfg.spatial("stride", spatial_rank, 1, 1, 1);
  o.padding = cfg.spatial("padding", spatial_rank, 0, 0, 0);
  o.dilation = cfg.spatial("dilation", spatial_rank, 1, 1, 1);
  o.bias = cfg.boolean("bias", true);
  return std::make_unique<Conv>(name, o);
}

const Shape& Conv::single_input(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  return inputs[0];
}

ops::ConvGeometry Conv::geometry(const Shape& input) const {
  const bool is_2d = options_.spatial_rank == 2;
  require_shape(
      input.rank() == options_.spatial_rank + 2,
      where() + ": expected an input " + (is_2d ? "[N, H, W, C]" : "[N, D, H, W, C]") + ", got " + input.str());
  const ActivationDims a = ActivationDims::of(input);
  ops::ConvGeometry g;
  g.spatial_rank = options_.spatial_rank;
  g.batch = a.n;
  g.in_channels = a.c;
  g.out_channels = options_.filters;
  g.in_size = {a.d, a.h, a.w};
  g.kernel = options_.kernel;
  g.stride = options_.stride;
  g.padding = options_.padding;
  g.dilation = options_.dilation;
  g.validate(where());
  return g;
}

Shape Conv::output_shape(const std::vector<Shape>& inputs) const {
  return geometry(single_input(inputs)).output_shape();
}

void Conv::declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) {
  const ops::ConvGeometry g = geometry(single_input(inputs));
  in_channels_ = g.in_channels;
  const int64_t taps = g.kernel_volume();
  weight_ = params.declare(name() + ".weight", g.weight_shape(), Init::weight, taps * g.in_channels,
                           taps * g.out_channels);
  if (options_.bias)
    bias_ = params.declare(name() + ".bias", Shape{g.out_channels}, Init::bias, taps * g.in_channels,
                           taps * g.out_channels);
}

void Conv::reshape(const std::vector<Shape>& inputs) {
  const Shape& input = single_input(inputs);
  const ops::ConvGeometry g = geometry(input);
  require_shape(g.in_channels == in_channels_, where() + ": input " + input.str() + " does not have the " +
                                                   std::to_string(in_channels_) + " channels it was set up with");
  if (op_ && input == op_input_) return;  // keep the op and its workspace
  op_ = op_factory().conv(g, name());
  op_input_ = input;
}

std::string Conv::backend() const { return op_ ? op_->backend() : ""; }

double Conv::forward_flops(const std::vector<Shape>& inputs) const {
  ops::ConvGeometry g = geometry(single_input(inputs));
  g.batch = 1;
  return g.forward_flops();
}

void Conv::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  op_->forward(inputs.at(0), weight_->value, bias_ ? bias_->value : Tensor(), output);
}

void Conv::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                    const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  op_->backward_weights(inputs.at(0), grad_output, weight_->grad, bias_ ? bias_->grad : Tensor());
  if (!grad_inputs.at(0).empty()) op_->backward_data(grad_output, weight_->value, grad_inputs[0]);
}

}  // namespace tessera::layers
