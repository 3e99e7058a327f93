#include "tessera/layers/conv_max_pool.hpp"

#include <algorithm>

#include "tessera/backends/kokkos/max_pool_slab_kernels.hpp"
#include "tessera/core/error.hpp"

namespace tessera::layers {
namespace {
using ByteView = kokkos_backend::SlabArgmax;
using kokkos_backend::MaxPoolSlabLayout;
}  // namespace

ConvMaxPool::ConvMaxPool(std::unique_ptr<Conv> conv, const std::string& pool_name, const PoolOptions& pool,
                         int64_t slab_bytes)
    : Layer(conv->name() + "+" + pool_name), conv_(std::move(conv)), pool_(pool_name, pool), slab_bytes_(slab_bytes) {
  if (!can_fuse(pool, conv_->options().spatial_rank))
    throw Error(where() + ": the pooling cannot be fused (it needs max pooling with kernel = stride and no padding)");
}

void ConvMaxPool::declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) {
  conv_->declare(inputs, context(), params);
}

bool ConvMaxPool::can_fuse(const PoolOptions& pool, int spatial_rank) {
  if (pool.kind != ops::PoolKind::max || pool.spatial_rank != spatial_rank) return false;
  for (size_t i = 0; i < 3; ++i)
    if (pool.kernel[i] != pool.stride[i] || pool.padding[i] != 0) return false;
  return pool.kernel[0] * pool.kernel[1] * pool.kernel[2] <= 255;
}

bool ConvMaxPool::pays_off(const ops::ConvGeometry& g) {
  const auto out = g.out_size();
  return out[0] * out[1] * out[2] * g.out_channels * static_cast<int64_t>(element_size(g.type)) > kSlabBytes;
}

LayerTraits ConvMaxPool::traits() const {
  LayerTraits t;
  t.mixes_channels = true;
  t.op_kinds = {ops::OpKind::conv};
  t.precisions = {ElementType::fp32, ElementType::bf16, ElementType::fp16};
  return t;
}

std::string ConvMaxPool::type() const {
  return conv_->type() + "+max_pool" + (pool_.options().spatial_rank == 2 ? "2d" : "3d");
}

Shape ConvMaxPool::output_shape(const std::vector<Shape>& inputs) const {
  return pool_.geometry(conv_->output_shape(inputs)).output_shape();
}

void ConvMaxPool::reshape(const std::vector<Shape>& inputs) {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  if (slab_op_ && inputs[0] == op_input_) return;
  require_shape(!grid().distribution().is_spatial(), where() + ": cannot run with its samples split in space");
  conv_g_ = conv_->geometry(inputs[0]);
  pool_g_ = pool_.geometry(conv_g_.output_shape());
  const auto out = conv_g_.out_size();
  const auto pooled = pool_g_.out_size();
  const int64_t kd = pool_g_.kernel[0];
  const int64_t used_rows = pooled[0] * kd;  // conv rows some window reads
  const int64_t row_bytes = out[1] * out[2] * conv_g_.out_channels * static_cast<int64_t>(element_size(conv_g_.type));
  const int64_t rows =
      std::min(used_rows, std::max<int64_t>(1, slab_bytes_ / std::max<int64_t>(row_bytes, 1) / kd) * kd);

  depth_padding_ = conv_g_.padding[0];
  auto slab_op = [&](int64_t slab_rows) {
    ops::ConvGeometry g = conv_g_;
    g.batch = 1;
    g.in_size[0] = input_rows(slab_rows);
    g.padding[0] = 0;
    g.validate(where());
    return op_factory().conv(g, name());
  };
  slab_op_ = slab_op(rows);
  last_slab_op_ = used_rows % rows != 0 ? slab_op(used_rows % rows) : nullptr;
  slabs_.clear();
  for (int64_t first = 0; first < used_rows; first += rows)
    slabs_.push_back(
        {first, std::min(rows, used_rows - first), first + rows <= used_rows ? slab_op_.get() : last_slab_op_.get()});

  const ActivationDims in = ActivationDims::of(inputs[0]);
  padded_grad_ = Tensor();
  slab_input_grad_ = Tensor();
  // Activations and their gradients are of the layer's precision; weights and their
  // gradients fp32.
  const ElementType type = conv_g_.type;
  padded_ = depth_padding_ > 0
                ? Tensor(Shape{in.n, in.d + 2 * depth_padding_, in.h, in.w, in.c}, type, name() + ".padded_input")
                : Tensor();
  const Shape slab_shape = Shape{rows * out[1] * out[2] * conv_g_.out_channels};  // sliced per slab
  slab_ = Tensor(slab_shape, type, name() + ".slab");
  slab_grad_ = Tensor(slab_shape, type, name() + ".slab_grad");
  weight_grad_ = Tensor(conv_g_.weight_shape(), name() + ".slab_weight_grad");
  bias_grad_ = conv_->bias() ? Tensor(Shape{conv_g_.out_channels}, name() + ".slab_bias_grad") : Tensor();
  argmax_ = ByteView(Kokkos::view_alloc(Kokkos::WithoutInitializing, name() + ".argmax"),
                     static_cast<size_t>(pool_g_.output_shape().numel()));
  op_input_ = inputs[0];
}

namespace {
/// Copies each sample's rows between `plain` [N, D, ...] and `padded` [N, D + 2·pad, ...], whose
/// first and last `pad` depth rows of each sample are padding.
void copy_interior(const Tensor& plain, const Tensor& padded, int64_t pad, bool into_padded) {
  const ActivationDims in = ActivationDims::of(plain.shape());
  const int64_t sample = in.d * in.h * in.w * in.c, row = in.h * in.w * in.c;
  const int64_t padded_sample = (in.d + 2 * pad) * row;
  for (int64_t n = 0; n < in.n; ++n) {
    const Tensor p = padded.slice(n * padded_sample + pad * row, Shape{sample});
    const Tensor q = plain.slice(n * sample, Shape{sample});
    if (into_padded)
      deep_copy(p, q);
    else
      deep_copy(q, p);
  }
}
}  // namespace

Tensor ConvMaxPool::padded_input(const Tensor& x) {
  if (padded_.empty()) return x;
  copy_interior(x, padded_, depth_padding_, true);  // the padding rows stay zero from the allocation
  return padded_;
}

int64_t ConvMaxPool::input_rows(int64_t rows) const {
  return (rows - 1) * conv_g_.stride[0] + (conv_g_.kernel[0] - 1) * conv_g_.dilation[0] + 1;
}

namespace {
/// An activation shape of the convolution's spatial rank (depth is 1 in 2D).
Shape activation(int spatial_rank, int64_t n, int64_t d, int64_t h, int64_t w, int64_t c) {
  return spatial_rank == 2 ? Shape{n, h, w, c} : Shape{n, d, h, w, c};
}

MaxPoolSlabLayout layout_of(const ops::ConvGeometry& conv, const ops::PoolGeometry& pool, int64_t n, int64_t first,
                            int64_t rows) {
  const auto out = conv.out_size();
  const auto pooled = pool.out_size();
  MaxPoolSlabLayout s{};
  s.rows = rows;
  s.h = out[1];
  s.w = out[2];
  s.c = conv.out_channels;
  s.kd = pool.kernel[0];
  s.kh = pool.kernel[1];
  s.kw = pool.kernel[2];
  s.pooled_rows = rows / s.kd;
  s.ph = pooled[1];
  s.pw = pooled[2];
  s.out_offset = ((n * pooled[0] + first / s.kd) * s.ph) * s.pw * s.c;
  return s;
}
}  // namespace

ConvMaxPool::SlabExtent ConvMaxPool::extent(const Tensor& x, int64_t n, const Slab& slab) const {
  // Output row o reads input rows [o·stride, o·stride + reach) of the depth-padded input.
  const ActivationDims in = ActivationDims::of(x.shape());
  const auto out = conv_g_.out_size();
  const int r = conv_g_.spatial_rank;
  return {(n * in.d + slab.first * conv_g_.stride[0]) * in.h * in.w * in.c,
          activation(r, 1, input_rows(slab.rows), in.h, in.w, in.c),
          activation(r, 1, slab.rows, out[1], out[2], conv_g_.out_channels)};
}

void ConvMaxPool::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  const Tensor x = padded_input(inputs.at(0));
  const Tensor& bias = conv_->bias() ? conv_->bias()->value : Tensor();
  for (int64_t n = 0; n < x.shape()[0]; ++n)
    for (const Slab& slab : slabs_) {
      const SlabExtent e = extent(x, n, slab);
      const Tensor y = slab_.slice(0, e.out_shape);
      slab.op->forward(x.slice(e.in_offset, e.in_shape), conv_->weight()->value, bias, y);
      kokkos_backend::max_pool_slab_forward(y, output, argmax_,
                                            layout_of(conv_g_, pool_g_, n, slab.first, slab.rows));
    }
}

void ConvMaxPool::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                           const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  const Tensor x = padded_.empty() ? inputs.at(0) : padded_;  // filled by forward
  Parameter* weight = conv_->weight();
  Parameter* bias = conv_->bias();

  // The slabs' input rows overlap by reach - stride rows, so their data gradients are summed
  // into the (depth-padded) input gradient. Buffers are allocated on first use: the model
  // input's convolution never needs them.
  const Tensor& dx = grad_inputs.at(0);
  Tensor dx_sum;
  if (!dx.empty()) {
    if (padded_.empty()) {
      dx_sum = dx;
    } else {
      if (padded_grad_.empty()) padded_grad_ = Tensor(padded_.shape(), padded_.type(), name() + ".padded_input_grad");
      dx_sum = padded_grad_;
    }
    if (slab_input_grad_.empty())
      slab_input_grad_ =
          Tensor(Shape{extent(x, 0, slabs_.front()).in_shape.numel()}, x.type(), name() + ".slab_input_grad");
    dx_sum.zero();
  }

  bool first = true;
  for (int64_t n = 0; n < x.shape()[0]; ++n)
    for (const Slab& slab : slabs_) {
      const SlabExtent e = extent(x, n, slab);
      const Tensor dy = slab_grad_.slice(0, e.out_shape);
      kokkos_backend::max_pool_slab_backward(grad_output, argmax_, dy,
                                             layout_of(conv_g_, pool_g_, n, slab.first, slab.rows));
      if (!dx.empty()) {
        const Tensor part = slab_input_grad_.slice(0, e.in_shape);
        slab.op->backward_data(dy, weight->value, part);
        kokkos_backend::add_slab_gradient(dx_sum.slice(e.in_offset, e.in_shape), part);
      }
      // backward_weights overwrites: the first slab writes the layer's gradients, the others
      // go through the slab buffers and are added.
      const Tensor& dw = first ? weight->grad : weight_grad_;
      const Tensor& db = bias ? (first ? bias->grad : bias_grad_) : Tensor();
      slab.op->backward_weights(x.slice(e.in_offset, e.in_shape), dy, dw, db);
      if (!first) {
        kokkos_backend::add_slab_gradient(weight->grad, weight_grad_);
        if (bias) kokkos_backend::add_slab_gradient(bias->grad, bias_grad_);
      }
      first = false;
    }
  if (!dx.empty() && !padded_.empty()) copy_interior(dx, padded_grad_, depth_padding_, false);
}

}  // namespace tessera::layers
