#include "tessera/layers/conv.hpp"

#include <functional>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/layers/conv_max_pool.hpp"
#include "tessera/ops/size_limits.hpp"

namespace tessera::layers {

Conv::Conv(std::string name, const ConvOptions& options) : Layer(std::move(name)), options_(options) {}

std::unique_ptr<Layer> Conv::from_json(const std::string& name, ConfigObject& cfg, int spatial_rank) {
  if (spatial_rank != 2 && spatial_rank != 3)
    throw ConfigError(cfg.path(), "a convolution is 2D or 3D, got spatial rank " + std::to_string(spatial_rank));
  ConvOptions o;
  o.spatial_rank = spatial_rank;
  o.filters = cfg.integer_in("filters", 1, ops::kMaxExtent);
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
  g.type = context().precision;
  g.validate(where());
  return g;
}

LayerTraits Conv::traits() const {
  LayerTraits t;
  t.spatial_split = true;
  t.channel_split = true;
  t.mixes_channels = true;
  t.output_channels_key = "filters";
  t.op_kinds = {ops::OpKind::conv};
  t.precisions = {ElementType::fp32, ElementType::bf16, ElementType::fp16};
  return t;
}

std::optional<SlidingWindow> Conv::window(const Shape& input) const {
  const ops::ConvGeometry g = geometry(input);
  return SlidingWindow{Window{g.kernel, g.stride, g.padding, g.dilation}, false};
}

std::optional<LayerOp> Conv::backend_op(const std::vector<Shape>& inputs) const {
  LayerOp op;
  op.kind = ops::OpKind::conv;
  op.conv = geometry(inputs.at(0));
  return op;
}

Shape Conv::output_shape(const std::vector<Shape>& inputs) const {
  return geometry(single_input(inputs)).output_shape();
}

void Conv::declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) {
  const ops::ConvGeometry g = geometry(whole_channels(single_input(inputs)));
  in_channels_ = g.in_channels;
  const int64_t taps = g.kernel_volume();
  const Shape w = g.weight_shape();
  const ParameterShard block = ChannelSplit::weight_shard(grid(), w, 0, w.rank() - 1, where());
  weight_ = declare_shard(params, name() + ".weight", ShardedWeight::shard(grid(), block, where()), Init::weight,
                          taps * g.in_channels, taps * g.out_channels);
  if (options_.bias)
    bias_ = declare_shard(params, name() + ".bias", ChannelSplit::bias_shard(grid(), Shape{g.out_channels}, where()),
                          Init::bias, taps * g.in_channels, taps * g.out_channels);
}

void Conv::reshape(const std::vector<Shape>& inputs) {
  const Shape& input = single_input(inputs);
  const Shape whole_input = whole_channels(input);
  ops::ConvGeometry g = geometry(whole_input);
  require_shape(g.in_channels == in_channels_, where() + ": input " + whole_input.str() + " does not have the " +
                                                   std::to_string(in_channels_) + " channels it was set up with");
  if (op_ && input == op_input_) return;  // keep the op and its workspace
  split_.reshape(grid(), whole_input, g.output_shape(), where(), g.type);
  weight_block_.reshape(grid(), weight_, where());
  // The op sees what this rank computes: its filters of the whole input, or all filters of
  // its input channels.
  g.out_channels = ChannelSplit::op_out_channels(grid(), g.out_channels, where());
  g.in_channels = ChannelSplit::op_in_channels(grid(), g.in_channels, where());
  const Shape op_input = split_.op_input_shape(input);
  if (grid().distribution().is_spatial()) {
    halo_.reshape(grid(), op_input, parallel::spatial_size_of(global_shape(input)),
                  Window{options_.kernel, options_.stride, options_.padding, options_.dilation}, 0.0f, where(),
                  context().precision);
    const ops::ConvGeometry local = halo_.op_geometry(g, where());
    op_ = op_factory().conv(local, name());
    if (context().halo_overlap != HaloOverlap::off)
      overlap_.reshape(local, halo_.widths(), context().halo_overlap == HaloOverlap::always, op_factory(), name(),
                       where());
    else
      overlap_ = HaloOverlappedConv();
  } else {
    op_ = op_factory().conv(g, name());
    overlap_ = HaloOverlappedConv();
  }
  choice_.reset(overlap_.active(), context().halo_overlap == HaloOverlap::where_it_pays);
  op_input_ = input;
}

std::string Conv::backend() const { return op_ ? op_->backend() : ""; }

std::string Conv::distribution_note() const {
  if (!halo_.active()) return "";
  if (context().halo_overlap == HaloOverlap::off) return "halo exchange first (halo_overlap false)";
  const std::string& measured = choice_.verdict();
  if (!overlap_.active() && measured.empty()) return "halo exchange first: " + overlap_.verdict().reason;
  return std::string(choice_.overlapped() ? "halo overlapped: " : "halo exchange first: ") + overlap_.verdict().reason +
         (measured.empty() ? "" : "; " + measured);
}

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

namespace {
/// Fenced seconds of `f` when `timed`; f alone, untimed, otherwise.
double timed_if(bool timed, const std::function<void()>& f) {
  if (timed) return fenced_seconds(f);
  f();
  return 0.0;
}
}  // namespace

void Conv::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) {
  const Tensor& x = split_.op_input(inputs.at(0));
  const Tensor& y = split_.op_output(output);
  const Tensor bias = bias_ && ChannelSplit::owns_bias(grid()) ? bias_->value : Tensor();
  const bool overlapped = step.mode == Mode::training ? choice_.start_training_step() : choice_.overlapped();
  // Input-gradient halos travel behind the weight gradient at no extra work, so the backward
  // pass overlaps whenever allowed, unless this step measures exchanging first.
  backward_overlapped_ = context().halo_overlap != HaloOverlap::off && (overlapped || !choice_.candidate());
  const Tensor& w = weight_block_.gather();
  choice_.add(timed_if(choice_.timing(), [&] {
    if (overlapped && overlap_.active())
      overlap_.forward(halo_, x, w, bias, y);
    else
      op_->forward(halo_.gather(x), w, bias, y);
  }));
  split_.finish_output(output);
}

void Conv::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                    const std::vector<Tensor>& grad_inputs, const StepInfo& step) {
  const Tensor& x = halo_.gathered(split_.saved_input(inputs.at(0)));
  const Tensor& dy = split_.op_grad_output(grad_output);
  const Tensor& dx = split_.op_grad_input(grad_inputs.at(0));
  const Tensor dbias = bias_ ? bias_->grad : Tensor();
  choice_.add(timed_if(choice_.timing(), [&] {
    if (dx.empty()) {
      op_->backward_weights(x, dy, weight_block_.grad(), dbias);
      return;
    }
    // The input gradient goes first so its halo travels back to the neighbours while the
    // weight gradient is computed.
    op_->backward_data(dy, weight_block_.value(), halo_.grad_buffer(dx));
    halo_.start_scatter(dx);
    if (!backward_overlapped_) halo_.finish_scatter();
    op_->backward_weights(x, dy, weight_block_.grad(), dbias);
    if (backward_overlapped_) halo_.finish_scatter();
    split_.finish_grad_input(grad_inputs.at(0));
  }));
  if (step.mode == Mode::training && choice_.finish_training_step(grid().spatial())) {
    log::info(where() + ": halo overlap " + choice_.verdict());
    if (!choice_.overlapped()) overlap_.release();  // its buffers are dead weight from now on
  }
  weight_block_.finish_grad();
  if (bias_ && !ChannelSplit::owns_bias(grid())) bias_->grad.zero();
}

}  // namespace tessera::layers
