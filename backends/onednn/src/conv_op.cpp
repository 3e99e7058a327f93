// Convolution through oneDNN's direct convolution primitives on plain channels-last tensors.
//
// Weights: oneDNN 2.6 has no JIT kernel for plain ODHWI ("odhwi"/"ohwi") f32 weights; primitives
// created with them run the reference loops (0.1-0.5 GFLOP/s on 2 cores for cosmoflow's conv5,
// 256->256 @4^3, against 180-530 with brgconv/jit). So the primitives choose their weight layout
// ("any") and each call reorders the ODHWI weights into it (and the weight gradient back out)
// through a staging buffer shared by all ops. Measured on 2 cores for conv5's 256x256x27
// weights: 0.3-0.7 ms per pass against 2.3-3.7 ms of convolution; over the five cosmoflow
// layers about 2.5 ms per training step, < 1% of its ~390 ms of convolution at batch 4.
// 2D runs as a 2D primitive: as 3D with depth 1 oneDNN picks the same kernels and measured the
// same (64->64 @64^2 batch 4: 281-304 / 242-258 / 266-274 GFLOP/s fwd / bwd-data / bwd-weights
// as 2D, 288-289 / 238-250 / 259-275 as 3D). algorithm::convolution_auto selects the same
// implementations as convolution_direct here.
#include <array>
#include <utility>
#include <vector>

#include "dnnl_compat.hpp"
#include "engine.hpp"
#include "onednn_ops.hpp"

namespace tessera::onednn_backend {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

/// The geometry in oneDNN's terms: logical dims N, C, [D,] H, W with channels-last tags.
/// `weights` is the layer's fp32 ODHWI tensor; in bf16 the forward and backward-data
/// primitives read bf16 weights, which the reorder into their layout converts to, and the
/// weight gradient is fp32 (oneDNN accumulates it in fp32 and writes it so, as PyTorch's
/// autocast keeps master gradients).
struct ConvDescs {
  memory::desc src, weights, bias, dst;
  compat::ConvWindow window;
};

ConvDescs describe(const ops::ConvGeometry& g) {
  const bool is_2d = g.spatial_rank == 2;
  const size_t first = is_2d ? 1 : 0;
  const auto out = g.out_size();
  memory::dims in_dims{g.batch, g.in_channels}, out_dims{g.batch, g.out_channels};
  memory::dims w_dims{g.out_channels, g.in_channels};
  ConvDescs d;
  for (size_t i = first; i < 3; ++i) {
    in_dims.push_back(g.in_size[i]);
    out_dims.push_back(out[i]);
    w_dims.push_back(g.kernel[i]);
    d.window.strides.push_back(g.stride[i]);
    d.window.dilates.push_back(g.dilation[i] - 1);  // oneDNN counts the gaps between taps
    // Our sizes round down like oneDNN's, so the trailing padding may stay as given.
    d.window.padding_l.push_back(g.padding[i]);
    d.window.padding_r.push_back(g.padding[i]);
  }
  const auto f32 = memory::data_type::f32;
  const auto act = data_type_of(g.type);
  d.src = memory::desc(in_dims, act, is_2d ? tag::nhwc : tag::ndhwc);
  d.dst = memory::desc(out_dims, act, is_2d ? tag::nhwc : tag::ndhwc);
  d.weights = memory::desc(w_dims, f32, is_2d ? tag::ohwi : tag::odhwi);
  d.bias = memory::desc({g.out_channels}, f32, tag::a);
  return d;
}

/// One pass of the convolution: its primitive and the reorder that moves the weights (or their
/// gradient) between ODHWI and the primitive's layout, when these differ.
struct Pass {
  BoundPrimitive conv;
  BoundPrimitive reorder;  // built only when the layouts differ
  size_t staged_bytes = 0;
};

/// A convolution bound to one geometry. Its primitives are built on first use of each pass
/// (and with or without bias), for the OpenMP thread count of that moment, and rebuilt when
/// that count changes; in between, calls only bind pointers and run.
class OnednnConvOp final : public ops::ConvOp {
 public:
  explicit OnednnConvOp(const ops::ConvGeometry& g) : g_(g), d_(describe(g)) {}

  std::string backend() const override { return "onednn"; }

  /// False when oneDNN has no implementation for one of the passes, or only its naive
  /// reference one (which the Kokkos im2col + gemm outruns by far).
  bool supported() const {
    try {
      const auto fwd = forward_pd(false);
      const auto data = backward_data_pd(fwd);
      const auto weights = backward_weights_pd(fwd, false);
      return !is_reference(fwd) && !is_reference(data) && !is_reference(weights);
    } catch (const dnnl::error&) {
      return false;
    }
  }

  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) override {
    require_elements(x, g_.input_shape(), what(), "input", g_.type);
    require_elements(w, g_.weight_shape(), what(), "weight");
    if (!bias.empty()) require_elements(bias, Shape{g_.out_channels}, what(), "bias");
    require_elements(y, g_.output_shape(), what(), "output", g_.type);
    const auto lock = Engine::get().lock();
    Pass& p = forward_[bias.empty() ? 0 : 1];
    if (p.conv.threads != Engine::threads()) {
      const auto pd = forward_pd(!bias.empty());
      std::vector<std::pair<int, memory::desc>> args{
          {DNNL_ARG_SRC, d_.src}, {DNNL_ARG_WEIGHTS, pd.weights_desc()}, {DNNL_ARG_DST, d_.dst}};
      if (!bias.empty()) args.emplace_back(DNNL_ARG_BIAS, d_.bias);
      p.conv.build<dnnl::convolution_forward::primitive_desc, dnnl::convolution_forward>(pd, args);
      build_reorder(p, d_.weights, pd.weights_desc());
    }
    p.conv.bind(DNNL_ARG_SRC, x.raw_data());
    p.conv.bind(DNNL_ARG_WEIGHTS, weights_for(p, w));
    if (!bias.empty()) p.conv.bind(DNNL_ARG_BIAS, bias.data());
    p.conv.bind(DNNL_ARG_DST, y.raw_data());
    p.conv.run();
  }

  void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) override {
    require_elements(dy, g_.output_shape(), what(), "output gradient", g_.type);
    require_elements(w, g_.weight_shape(), what(), "weight");
    require_elements(dx, g_.input_shape(), what(), "input gradient", g_.type);
    const auto lock = Engine::get().lock();
    Pass& p = backward_data_;
    if (p.conv.threads != Engine::threads()) {
      const auto pd = backward_data_pd(forward_pd(false));
      p.conv.build<dnnl::convolution_backward_data::primitive_desc, dnnl::convolution_backward_data>(
          pd, {{DNNL_ARG_DIFF_DST, d_.dst}, {DNNL_ARG_WEIGHTS, pd.weights_desc()}, {DNNL_ARG_DIFF_SRC, d_.src}});
      build_reorder(p, d_.weights, pd.weights_desc());
    }
    p.conv.bind(DNNL_ARG_DIFF_DST, dy.raw_data());
    p.conv.bind(DNNL_ARG_WEIGHTS, weights_for(p, w));
    p.conv.bind(DNNL_ARG_DIFF_SRC, dx.raw_data());
    p.conv.run();
  }

  void backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) override {
    require_elements(x, g_.input_shape(), what(), "input", g_.type);
    require_elements(dy, g_.output_shape(), what(), "output gradient", g_.type);
    require_elements(dw, g_.weight_shape(), what(), "weight gradient");
    if (!dbias.empty()) require_elements(dbias, Shape{g_.out_channels}, what(), "bias gradient");
    const auto lock = Engine::get().lock();
    Pass& p = backward_weights_[dbias.empty() ? 0 : 1];
    if (p.conv.threads != Engine::threads()) {
      const auto pd = backward_weights_pd(forward_pd(!dbias.empty()), !dbias.empty());
      std::vector<std::pair<int, memory::desc>> args{
          {DNNL_ARG_SRC, d_.src}, {DNNL_ARG_DIFF_DST, d_.dst}, {DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc()}};
      if (!dbias.empty()) args.emplace_back(DNNL_ARG_DIFF_BIAS, d_.bias);
      p.conv.build<dnnl::convolution_backward_weights::primitive_desc, dnnl::convolution_backward_weights>(pd, args);
      build_reorder(p, pd.diff_weights_desc(), d_.weights);
    }
    void* staged = p.reorder.built() ? Engine::get().staging().get(p.staged_bytes) : nullptr;
    p.conv.bind(DNNL_ARG_SRC, x.raw_data());
    p.conv.bind(DNNL_ARG_DIFF_DST, dy.raw_data());
    p.conv.bind(DNNL_ARG_DIFF_WEIGHTS, staged ? staged : dw.data());
    if (!dbias.empty()) p.conv.bind(DNNL_ARG_DIFF_BIAS, dbias.data());
    p.conv.run();
    if (staged) {
      p.reorder.bind(DNNL_ARG_FROM, staged);
      p.reorder.bind(DNNL_ARG_TO, dw.data());
      p.reorder.run();
    }
  }

 private:
  std::string what() const { return "convolution " + g_.str(); }

  /// The weights the forward and backward-data primitives read: the activations' type.
  memory::desc weights_request() const {
    return memory::desc(compat::dims_of(d_.weights), compat::data_type_of_desc(d_.src), tag::any);
  }
  /// The weight gradient backward-weights writes: fp32 in every precision.
  memory::desc weight_gradient_request() const {
    return memory::desc(compat::dims_of(d_.weights), memory::data_type::f32, tag::any);
  }

  dnnl::convolution_forward::primitive_desc forward_pd(bool bias) const {
    return compat::conv_forward_pd(d_.src, weights_request(), bias ? d_.bias : memory::desc(), d_.dst, d_.window,
                                   user_scratchpad_attr());
  }

  dnnl::convolution_backward_data::primitive_desc backward_data_pd(
      const dnnl::convolution_forward::primitive_desc& hint) const {
    return compat::conv_backward_data_pd(d_.src, weights_request(), d_.dst, d_.window, hint, user_scratchpad_attr());
  }

  dnnl::convolution_backward_weights::primitive_desc backward_weights_pd(
      const dnnl::convolution_forward::primitive_desc& hint, bool bias) const {
    return compat::conv_backward_weights_pd(d_.src, weight_gradient_request(), bias ? d_.bias : memory::desc(),
                                            d_.dst, d_.window, hint, user_scratchpad_attr());
  }

  /// A reorder from `from` to `to` when they differ, staging the side that is not ODHWI.
  void build_reorder(Pass& p, const memory::desc& from, const memory::desc& to) const {
    p.reorder = BoundPrimitive();
    if (from == to) return;
    const auto& engine = Engine::get().engine();
    const dnnl::reorder::primitive_desc pd(engine, from, engine, to, user_scratchpad_attr());
    p.reorder.build<dnnl::reorder::primitive_desc, dnnl::reorder>(pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
    p.staged_bytes = (from == d_.weights ? to : from).get_size();
  }

  /// The weights as the primitive reads them: `w` itself, or its reordered copy.
  const void* weights_for(Pass& p, const Tensor& w) const {
    if (!p.reorder.built()) return w.data();
    void* staged = Engine::get().staging().get(p.staged_bytes);
    p.reorder.bind(DNNL_ARG_FROM, w.data());
    p.reorder.bind(DNNL_ARG_TO, staged);
    p.reorder.run();
    return staged;
  }

  ops::ConvGeometry g_;
  ConvDescs d_;
  Pass forward_[2];  // without, with bias
  Pass backward_data_;
  Pass backward_weights_[2];
};

}  // namespace

std::unique_ptr<ops::ConvOp> make_conv(const ops::ConvGeometry& g, std::string& why) {
  g.validate("onednn backend");
  auto op = std::make_unique<OnednnConvOp>(g);
  if (!op->supported()) {
    why = "oneDNN has only its slow reference kernel for " + g.str();
    return nullptr;
  }
  return op;
}

}  // namespace tessera::onednn_backend
