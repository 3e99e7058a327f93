#include "tessera/layers/conv_transpose.hpp"

#include <array>

#include "tessera/backends/kokkos/conv_kernels.hpp"
#include "tessera/core/error.hpp"
#include "tessera/ops/size_limits.hpp"

namespace tessera::layers {
ConvTranspose::ConvTranspose(std::string name, const ConvTransposeOptions& options)
    : Layer(std::move(name)), options_(options) {}

std::unique_ptr<Layer> ConvTranspose::from_json(const std::string& name, ConfigObject& cfg, int spatial_rank) {
  if (spatial_rank != 2 && spatial_rank != 3)
    throw ConfigError(cfg.path(),
                      "a transposed convolution is 2D or 3D, got spatial rank " + std::to_string(spatial_rank));
  ConvTransposeOptions o;
  o.spatial_rank = spatial_rank;
  o.filters = cfg.integer_in("filters", 1, ops::kMaxExtent);
  o.kernel = cfg.spatial("kernel", spatial_rank, 2, 1, 1);
  o.stride = cfg.spatial("stride", spatial_rank, 2, 1, 1);
  o.padding = cfg.spatial("padding", spatial_rank, 0, 0, 0);
  o.output_padding = cfg.spatial("output_padding", spatial_rank, 0, 0, 0);
  for (size_t i = 0; i < 3; ++i)
    if (o.output_padding[i] >= o.stride[i])
      throw ConfigError(cfg.path_of("output_padding"), "must be less than the stride (" + std::to_string(o.stride[i]) +
                                                           "), got " + std::to_string(o.output_padding[i]));
  o.bias = cfg.boolean("bias", true);
  return std::make_unique<ConvTranspose>(name, o);
}

const Shape& ConvTranspose::single_input(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  return inputs[0];
}

ops::ConvGeometry ConvTranspose::adjoint_geometry(const Shape& input) const {
  const bool is_2d = options_.spatial_rank == 2;
  require_shape(
      input.rank() == options_.spatial_rank + 2,
      where() + ": expected an input " + (is_2d ? "[N, H, W, C]" : "[N, D, H, W, C]") + ", got " + input.str());
  const ActivationDims a = ActivationDims::of(input);
  const std::array<int64_t, 3> in{a.d, a.h, a.w};
  std::array<int64_t, 3> out{};
  static const char* const axis[3] = {"depth", "height", "width"};
  for (size_t i = 0; i < 3; ++i) {
    const int64_t s = options_.stride[i], op = options_.output_padding[i];
    require_shape(op >= 0 && op < s, where() + ": output_padding " + std::to_string(op) + " in " + axis[i] +
                                         " must be in [0, stride " + std::to_string(s) + ")");
    // The bounds ConvGeometry::validate sets, checked before they size the output: from a
    // config, larger values overflow int64 here.
    using ops::kMaxExtent, ops::kMaxSize;
    require_shape(
        in[i] <= kMaxSize && s <= kMaxExtent && options_.kernel[i] <= kMaxExtent && options_.padding[i] <= kMaxExtent,
        where() + ": input " + axis[i] + " " + std::to_string(in[i]) + " (at most " + std::to_string(kMaxSize) +
            "), kernel " + std::to_string(options_.kernel[i]) + ", stride " + std::to_string(s) + " and padding " +
            std::to_string(options_.padding[i]) + " (each at most " + std::to_string(kMaxExtent) +
            ") are out of range");
    out[i] = (in[i] - 1) * s - 2 * options_.padding[i] + (options_.kernel[i] - 1) + op + 1;
    require_shape(out[i] >= 1, where() + ": input " + input.str() + " gives an output " + axis[i] + " of " +
                                   std::to_string(out[i]) + " (padding " + std::to_string(options_.padding[i]) +
                                   " is too large for kernel " + std::to_string(options_.kernel[i]) + ")");
  }
  ops::ConvGeometry g;
  g.spatial_rank = options_.spatial_rank;
  g.batch = a.n;
  g.in_channels = options_.filters;
  g.out_channels = a.c;
  g.in_size = out;
  g.kernel = options_.kernel;
  g.stride = options_.stride;
  g.padding = options_.padding;
  g.type = context().precision;
  g.validate(where());
  require_shape(g.out_size() == in, where() + ": internal error: the adjoint convolution " + g.str() +
                                        " does not map back to input " + input.str());
  return g;
}

LayerTraits ConvTranspose::traits() const {
  LayerTraits t;
  t.spatial_split = true;
  t.channel_split = true;
  t.mixes_channels = true;
  t.output_channels_key = "filters";
  t.op_kinds = {ops::OpKind::conv};
  t.precisions = {ElementType::fp32, ElementType::bf16, ElementType::fp16};
  return t;
}

std::optional<SlidingWindow> ConvTranspose::window(const Shape& /*input*/) const {
  // Its window slides over its output; a 2D one has a depth of one.
  std::array<int64_t, 3> kernel = options_.kernel, stride = options_.stride, padding = options_.padding;
  if (options_.spatial_rank == 2) kernel[0] = stride[0] = 1, padding[0] = 0;
  return SlidingWindow{Window{kernel, stride, padding, {1, 1, 1}}, true};
}

std::optional<LayerOp> ConvTranspose::backend_op(const std::vector<Shape>& inputs) const {
  LayerOp op;
  op.kind = ops::OpKind::conv;
  op.adjoint_conv = true;
  op.conv = adjoint_geometry(inputs.at(0));
  op.bias = options_.bias;
  return op;
}

Shape ConvTranspose::output_shape(const std::vector<Shape>& inputs) const {
  return adjoint_geometry(single_input(inputs)).input_shape();
}

void ConvTranspose::declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) {
  const ops::ConvGeometry g = adjoint_geometry(whole_channels(single_input(inputs)));
  in_channels_ = g.out_channels;
  // Each output sums about ceil(k/s) taps per axis of every input channel: that, not the
  // kernel volume, is the fan-in that keeps He initialisation variance-preserving.
  int64_t taps_per_output = 1;
  for (size_t i = 0; i < 3; ++i) taps_per_output *= (options_.kernel[i] + options_.stride[i] - 1) / options_.stride[i];
  const int64_t fan_in = in_channels_ * taps_per_output;
  const int64_t fan_out = options_.filters * g.kernel_volume();
  const Shape w = g.weight_shape();
  const ParameterShard block = ChannelSplit::weight_shard(grid(), w, w.rank() - 1, 0, where());
  weight_ = declare_shard(params, name() + ".weight", ShardedWeight::shard(grid(), block, where()), Init::weight,
                          fan_in, fan_out);
  if (options_.bias)
    bias_ = declare_shard(params, name() + ".bias", ChannelSplit::bias_shard(grid(), Shape{options_.filters}, where()),
                          Init::bias, fan_in, fan_out);
}

void ConvTranspose::reshape(const std::vector<Shape>& inputs) {
  const Shape& input = single_input(inputs);
  const Shape whole_input = whole_channels(input);
  ops::ConvGeometry g = adjoint_geometry(whole_input);
  require_shape(g.out_channels == in_channels_, where() + ": input " + whole_input.str() + " does not have the " +
                                                    std::to_string(in_channels_) + " channels it was set up with");
  if (op_ && input == op_input_) return;
  const Shape whole_output = g.input_shape();
  split_.reshape(grid(), whole_input, whole_output, where(), g.type);
  weight_block_.reshape(grid(), weight_, where());
  // The adjoint convolution of this rank's share: its filters from the whole input, or all
  // filters from its input channels.
  g.in_channels = ChannelSplit::op_out_channels(grid(), g.in_channels, where());
  g.out_channels = ChannelSplit::op_in_channels(grid(), g.out_channels, where());
  if (grid().distribution().is_spatial()) {
    // The adjoint convolution reads this layer's output: under a spatial split its window
    // reaches into the neighbours' output blocks, so the output gets the halo.
    const Shape global_output = output_shape({global_shape(input)});
    const Shape output = split_.op_output_shape(grid().local_shape(global_output, where()));
    halo_.reshape(grid(), output, parallel::spatial_size_of(global_output),
                  Window{options_.kernel, options_.stride, options_.padding, {1, 1, 1}}, 0.0f, where(), g.type);
    const ops::ConvGeometry local = halo_.op_geometry(g, where());
    const ActivationDims in = ActivationDims::of(whole_input);
    require_shape(local.out_size() == std::array<int64_t, 3>{in.d, in.h, in.w},
                  where() + ": the block " + input.str() + " of the input does not map onto the output block " +
                      output.str() + " under distribution " + grid().distribution().str());
    op_ = op_factory().conv(local, name());
  } else {
    op_ = op_factory().conv(g, name());
  }
  op_input_ = input;
}

std::string ConvTranspose::backend() const { return op_ ? op_->backend() : ""; }

double ConvTranspose::forward_flops(const std::vector<Shape>& inputs) const {
  ops::ConvGeometry g = adjoint_geometry(single_input(inputs));
  g.batch = 1;
  return g.forward_flops();
}

Tensor ConvTranspose::own_bias(const Tensor& bias) const {
  const auto [offset, count] = ChannelSplit::output_in_bias(grid(), options_.filters, where());
  return bias.numel() == count ? bias : bias.slice(offset, Shape{count});
}

void ConvTranspose::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  // Under a spatial split the adjoint writes into the output block and its halo; the halo
  // part belongs to the neighbours and is added into their blocks.
  const Tensor& y = split_.op_output(output);
  op_->backward_data(split_.op_input(inputs.at(0)), weight_block_.gather(), halo_.grad_buffer(y));
  halo_.start_scatter(y);
  halo_.finish_scatter();
  split_.finish_output(output);
  if (bias_) kokkos_backend::add_channel_bias(own_bias(bias_->value), output);
}

void ConvTranspose::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                             const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  // In the adjoint convolution this layer's output gradient plays the input and its input
  // plays the output gradient.
  const Tensor& dy = halo_.gather(split_.op_grad_output(grad_output));
  // The input gradient first: it is the last reader of a sharded weight's gathered block,
  // which then takes the weight gradient.
  const Tensor& dx = split_.op_grad_input(grad_inputs.at(0));
  if (!dx.empty()) op_->forward(dy, weight_block_.value(), Tensor(), dx);
  op_->backward_weights(dy, split_.saved_input(inputs.at(0)), weight_block_.grad(), Tensor());
  weight_block_.finish_grad();
  if (bias_) {
    // Under a channel or grid split each rank writes the gradient of its slice of the bias it
    // holds (whole, or its column's).
    if (split_.kind() == ChannelSplit::Kind::channel || split_.kind() == ChannelSplit::Kind::grid) bias_->grad.zero();
    kokkos_backend::sum_channels(grad_output, own_bias(bias_->grad), bias_workspace_);
  }
  if (!dx.empty()) split_.finish_grad_input(grad_inputs.at(0));
}

}  // namespace tessera::layers
