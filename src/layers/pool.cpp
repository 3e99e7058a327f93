#include "tessera/layers/pool.hpp"

#include <limits>

#include "tessera/core/error.hpp"

namespace tessera::layers {

Pool::Pool(std::string name, const PoolOptions& options) : Layer(std::move(name)), options_(options) {}

template <ops::PoolKind Kind>
std::unique_ptr<Layer> Pool::from_json(const std::string& name, ConfigObject& cfg, int spatial_rank) {
  if (spatial_rank != 2 && spatial_rank != 3)
    throw ConfigError(cfg.path(), "pooling is 2D or 3D, got spatial rank " + std::to_string(spatial_rank));
  PoolOptions o;
  o.kind = Kind;
  o.spatial_rank = spatial_rank;
  o.kernel = cfg.spatial("kernel", spatial_rank, 2, 1, 1);
  // The default stride is the kernel (non-overlapping windows), given per axis.
  if (cfg.has("stride")) {
    o.stride = cfg.spatial("stride", spatial_rank, 1, 1, 1);
  } else {
    o.stride = o.kernel;
  }
  o.padding = cfg.spatial("padding", spatial_rank, 0, 0, 0);
  for (size_t i = 0; i < 3; ++i)
    if (o.padding[i] >= o.kernel[i])
      throw ConfigError(cfg.path_of("padding"), "must be less than the kernel (" + std::to_string(o.kernel[i]) +
                                                    "), got " + std::to_string(o.padding[i]));
  return std::make_unique<Pool>(name, o);
}

template std::unique_ptr<Layer> Pool::from_json<ops::PoolKind::max>(const std::string&, ConfigObject&, int);
template std::unique_ptr<Layer> Pool::from_json<ops::PoolKind::average>(const std::string&, ConfigObject&, int);

std::string Pool::type() const {
  return std::string(options_.kind == ops::PoolKind::max ? "max_pool" : "avg_pool") +
         (options_.spatial_rank == 2 ? "2d" : "3d");
}

const Shape& Pool::single_input(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  return inputs[0];
}

ops::PoolGeometry Pool::geometry(const Shape& input) const {
  const bool is_2d = options_.spatial_rank == 2;
  require_shape(
      input.rank() == options_.spatial_rank + 2,
      where() + ": expected an input " + (is_2d ? "[N, H, W, C]" : "[N, D, H, W, C]") + ", got " + input.str());
  const ActivationDims a = ActivationDims::of(input);
  ops::PoolGeometry g;
  g.kind = options_.kind;
  g.spatial_rank = options_.spatial_rank;
  g.batch = a.n;
  g.channels = a.c;
  g.in_size = {a.d, a.h, a.w};
  g.kernel = options_.kernel;
  g.stride = options_.stride;
  g.padding = options_.padding;
  g.type = context().precision;
  g.validate(where());
  return g;
}

LayerTraits Pool::traits() const {
  LayerTraits t;
  t.spatial_split = true;
  t.channel_split = true;
  t.op_kinds = {ops::OpKind::pool};
  t.precisions = {ElementType::fp32, ElementType::bf16, ElementType::fp16};
  return t;
}

std::optional<SlidingWindow> Pool::window(const Shape& input) const {
  const ops::PoolGeometry g = geometry(input);
  return SlidingWindow{Window{g.kernel, g.stride, g.padding, {1, 1, 1}}, false};
}

std::optional<LayerOp> Pool::backend_op(const std::vector<Shape>& inputs) const {
  LayerOp op;
  op.kind = ops::OpKind::pool;
  op.pool = geometry(inputs.at(0));
  return op;
}

Shape Pool::output_shape(const std::vector<Shape>& inputs) const {
  return geometry(single_input(inputs)).output_shape();
}

void Pool::reshape(const std::vector<Shape>& inputs) {
  const Shape& input = single_input(inputs);
  if (op_ && input == op_input_) return;
  if (grid().distribution().is_spatial()) {
    // Max pooling ignores padding, which a halo of the lowest float reproduces. Average pooling
    // divides by the in-bounds count, which a padded halo would change.
    halo_.reshape(grid(), input, parallel::spatial_size_of(global_shape(input)),
                  Window{options_.kernel, options_.stride, options_.padding, {1, 1, 1}},
                  std::numeric_limits<float>::lowest(), where(), context().precision);
    if (halo_.active() && options_.kind == ops::PoolKind::average)
      for (size_t k = 0; k < 3; ++k)
        require_shape(options_.padding[k] == 0 || grid().spatial_parts()[k] == 1,
                      where() +
                          ": average pooling with padding cannot split a padded axis over ranks (its "
                          "divisor excludes padding); use padding 0 or do not split that axis");
    const ops::PoolGeometry local = halo_.op_geometry(geometry(halo_.op_input_shape()), where());
    op_ = op_factory().pool(local, name());
  } else {
    op_ = op_factory().pool(geometry(input), name());
  }
  op_input_ = input;
}

std::string Pool::backend() const { return op_ ? op_->backend() : ""; }

void Pool::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  op_->forward(halo_.gather(inputs.at(0)), output);
}

void Pool::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                    const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  const Tensor& dx = grad_inputs.at(0);
  if (dx.empty()) return;
  op_->backward(halo_.gathered(inputs.at(0)), grad_output, halo_.grad_buffer(dx));
  halo_.start_scatter(dx);
  halo_.finish_scatter();
}

}  // namespace tessera::layers
