#include "tessera/layers/conv.hpp"

#include "tessera/core/error.hpp"
#include "tessera/layers/conv_max_pool.hpp"

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
  const ops::ConvGeometry g = geometry(whole_channels(single_input(inputs), grid()));
  in_channels_ = g.in_channels;
  const int64_t taps = g.kernel_volume();
  const Shape w = g.weight_shape();
  weight_ = declare_shard(params, name() + ".weight", ChannelSplit::weight_shard(grid(), w, 0, w.rank() - 1, where()),
                          Init::weight, taps * g.in_channels, taps * g.out_channels);
  if (options_.bias)
    bias_ = declare_shard(params, name() + ".bias", ChannelSplit::bias_shard(grid(), Shape{g.out_channels}, where()),
                          Init::bias, taps * g.in_channels, taps * g.out_channels);
}

void Conv::reshape(const std::vector<Shape>& inputs) {
  const Shape& input = single_input(inputs);
  const Shape whole_input = whole_channels(input, grid());
  ops::ConvGeometry g = geometry(whole_input);
  require_shape(g.in_channels == in_channels_, where() + ": input " + whole_input.str() + " does not have the " +
                                                   std::to_string(in_channels_) + " channels it was set up with");
  if (op_ && input == op_input_) return;  // keep the op and its workspace
  split_.reshape(grid(), whole_input, g.output_shape(), where());
  // The op sees what this rank computes: its filters of the whole input, or all filters of
  // its input channels.
  if (split_.kind() == ChannelSplit::Kind::filter) g.out_channels /= grid().channel_parts();
  if (split_.kind() == ChannelSplit::Kind::channel) g.in_channels /= grid().channel_parts();
  const Shape& op_input = split_.kind() == ChannelSplit::Kind::filter ? whole_input : input;
  if (grid().distribution().is_spatial()) {
    halo_.reshape(grid(), op_input, Window{options_.kernel, options_.stride, options_.padding, options_.dilation}, 0.0f,
                  where());
    const ops::ConvGeometry local = halo_.op_geometry(g, where());
    op_ = op_factory().conv(local, name());
    make_overlap_pieces(local);
  } else {
    op_ = op_factory().conv(g, name());
    interior_.clear();
    boundary_.clear();
  }
  op_input_ = input;
}

void Conv::make_overlap_pieces(const ops::ConvGeometry& local) {
  interior_.clear();
  boundary_.clear();
  // Only a split in depth (the outermost spatial axis) leaves each sample's rows contiguous,
  // so pieces of it are plain tensors for any backend.
  const auto parts = grid().spatial_parts();
  if (!context().overlap_halos || !halo_.active() || parts[1] != 1 || parts[2] != 1) return;
  const int64_t before = halo_.widths().before[0], s = local.stride[0];
  const int64_t reach = (local.kernel[0] - 1) * local.dilation[0] + 1;
  const int64_t outputs = local.out_size()[0], block = local.in_size[0] - before - halo_.widths().after[0];
  // Output row o reads haloed rows [o·s, o·s + reach): it needs no halo when those lie in
  // [before, before + block).
  const int64_t first = (before + s - 1) / s;
  const int64_t last = (before + block - reach) >= 0 ? (before + block - reach) / s : -1;  // inclusive
  auto piece = [&](int64_t o0, int64_t o1) {
    DepthPiece p;
    p.first_output = o0;
    p.outputs = o1 - o0;
    p.first_input = o0 * s;
    ops::ConvGeometry g = local;
    g.batch = 1;
    g.in_size[0] = (o1 - o0 - 1) * s + reach;
    g.validate(where());
    p.op = op_factory().conv(g, name());
    return p;
  };
  if (last < first) return;  // every row needs a halo: nothing to overlap
  interior_.push_back(piece(first, last + 1));
  if (first > 0) boundary_.push_back(piece(0, first));
  if (last + 1 < outputs) boundary_.push_back(piece(last + 1, outputs));
}

void Conv::forward_piece(const DepthPiece& piece, const Tensor& x, const Tensor& bias, const Tensor& y) {
  const ActivationDims in = ActivationDims::of(x.shape()), out = ActivationDims::of(y.shape());
  const int64_t in_row = in.h * in.w * in.c, out_row = out.h * out.w * out.c;
  const Shape in_shape{1,
                       (piece.outputs - 1) * options_.stride[0] + (options_.kernel[0] - 1) * options_.dilation[0] + 1,
                       in.h, in.w, in.c};
  const Shape out_shape{1, piece.outputs, out.h, out.w, out.c};
  for (int64_t n = 0; n < in.n; ++n) {
    piece.op->forward(x.slice((n * in.d + piece.first_input) * in_row, in_shape), weight_->value, bias,
                      y.slice((n * out.d + piece.first_output) * out_row, out_shape));
    halo_.progress();
  }
}

std::string Conv::backend() const { return op_ ? op_->backend() : ""; }

std::unique_ptr<Layer> Conv::fused_with_max_pool(const std::string& pool_name, const PoolOptions& pool,
                                                 const Shape& input) const {
  if (!ConvMaxPool::can_fuse(pool, options_.spatial_rank) || !ConvMaxPool::pays_off(geometry(input))) return nullptr;
  // Not set up yet, a convolution is its name and options: the fused layer gets its own.
  return std::make_unique<ConvMaxPool>(std::make_unique<Conv>(name(), options_), pool_name, pool);
}

double Conv::forward_flops(const std::vector<Shape>& inputs) const {
  ops::ConvGeometry g = geometry(single_input(inputs));
  g.batch = 1;
  return g.forward_flops();
}

void Conv::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  const Tensor& x = split_.op_input(inputs.at(0));
  const Tensor& y = split_.op_output(output);
  const Tensor bias = bias_ && ChannelSplit::owns_bias(grid()) ? bias_->value : Tensor();
  if (interior_.empty()) {
    op_->forward(halo_.gather(x), weight_->value, bias, y);
  } else {
    halo_.start_gather(x);
    const Tensor& haloed = halo_.gathered(x);
    for (const auto& piece : interior_) forward_piece(piece, haloed, bias, y);
    halo_.finish_gather();
    for (const auto& piece : boundary_) forward_piece(piece, haloed, bias, y);
  }
  split_.finish_output(output);
}

void Conv::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                    const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  const Tensor& x = halo_.gathered(split_.saved_input(inputs.at(0)));
  const Tensor& dy = split_.op_grad_output(grad_output);
  const Tensor& dx = split_.op_grad_input(grad_inputs.at(0));
  const Tensor dbias = bias_ ? bias_->grad : Tensor();
  if (dx.empty()) {
    op_->backward_weights(x, dy, weight_->grad, dbias);
  } else {
    // The input gradient goes first so its halo travels back to the neighbours while the
    // weight gradient is computed.
    op_->backward_data(dy, weight_->value, halo_.grad_buffer(dx));
    halo_.start_scatter(dx);
    if (!context().overlap_halos) halo_.finish_scatter();
    op_->backward_weights(x, dy, weight_->grad, dbias);
    if (context().overlap_halos) halo_.finish_scatter();
    split_.finish_grad_input(grad_inputs.at(0));
  }
  if (bias_ && !ChannelSplit::owns_bias(grid())) bias_->grad.zero();
}

}  // namespace tessera::layers
