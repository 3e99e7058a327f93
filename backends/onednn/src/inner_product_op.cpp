// Inner product (fully connected) through oneDNN's inner-product primitives: x [N, in] "nc",
// w [out, in] "oi", y [N, out] "nc". In fp32 the primitives read w in place. In bf16 x and y
// are bf16 and the forward and backward-data primitives read bf16 weights, which a reorder
// rounds from the fp32 master weights into the staging buffer at each call (as the
// convolutions do); the weight and bias gradients are fp32.
#include <utility>
#include <vector>

#include "dnnl_compat.hpp"
#include "engine.hpp"
#include "onednn_ops.hpp"

namespace tessera::onednn_backend {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

class OnednnInnerProductOp final : public ops::InnerProductOp {
 public:
  explicit OnednnInnerProductOp(const ops::InnerProductGeometry& g)
      : g_(g),
        src_({g.batch, g.in_features}, data_type_of(g.type), tag::nc),
        weights_({g.out_features, g.in_features}, memory::data_type::f32, tag::oi),
        read_weights_({g.out_features, g.in_features}, data_type_of(g.type), tag::oi),
        bias_({g.out_features}, memory::data_type::f32, tag::a),
        dst_({g.batch, g.out_features}, data_type_of(g.type), tag::nc) {}

  std::string backend() const override { return "onednn"; }

  bool supported() const {
    try {
      const auto fwd = forward_pd(false);
      return !is_reference(fwd) && !is_reference(backward_data_pd(fwd)) &&
             !is_reference(backward_weights_pd(fwd, false));
    } catch (const dnnl::error&) {
      return false;
    }
  }

  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) override {
    require_elements(x, Shape{g_.batch, g_.in_features}, what(), "x", g_.type);
    require_elements(w, Shape{g_.out_features, g_.in_features}, what(), "w");
    if (!bias.empty()) require_elements(bias, Shape{g_.out_features}, what(), "bias");
    require_elements(y, Shape{g_.batch, g_.out_features}, what(), "y", g_.type);
    const auto lock = Engine::get().lock();
    BoundPrimitive& p = forward_[bias.empty() ? 0 : 1];
    if (p.threads != Engine::threads()) {
      std::vector<std::pair<int, memory::desc>> args{
          {DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, read_weights_}, {DNNL_ARG_DST, dst_}};
      if (!bias.empty()) args.emplace_back(DNNL_ARG_BIAS, bias_);
      p.build<dnnl::inner_product_forward::primitive_desc, dnnl::inner_product_forward>(forward_pd(!bias.empty()),
                                                                                        args);
      build_weight_rounding();
    }
    p.bind(DNNL_ARG_SRC, x.raw_data());
    p.bind(DNNL_ARG_WEIGHTS, weights_read(w));
    if (!bias.empty()) p.bind(DNNL_ARG_BIAS, bias.data());
    p.bind(DNNL_ARG_DST, y.raw_data());
    p.run();
  }

  void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) override {
    require_elements(dy, Shape{g_.batch, g_.out_features}, what(), "dy", g_.type);
    require_elements(w, Shape{g_.out_features, g_.in_features}, what(), "w");
    require_elements(dx, Shape{g_.batch, g_.in_features}, what(), "dx", g_.type);
    const auto lock = Engine::get().lock();
    BoundPrimitive& p = backward_data_;
    if (p.threads != Engine::threads()) {
      p.build<dnnl::inner_product_backward_data::primitive_desc, dnnl::inner_product_backward_data>(
          backward_data_pd(forward_pd(false)),
          {{DNNL_ARG_DIFF_DST, dst_}, {DNNL_ARG_WEIGHTS, read_weights_}, {DNNL_ARG_DIFF_SRC, src_}});
      build_weight_rounding();
    }
    p.bind(DNNL_ARG_DIFF_DST, dy.raw_data());
    p.bind(DNNL_ARG_WEIGHTS, weights_read(w));
    p.bind(DNNL_ARG_DIFF_SRC, dx.raw_data());
    p.run();
  }

  void backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) override {
    require_elements(x, Shape{g_.batch, g_.in_features}, what(), "x", g_.type);
    require_elements(dy, Shape{g_.batch, g_.out_features}, what(), "dy", g_.type);
    require_elements(dw, Shape{g_.out_features, g_.in_features}, what(), "dw");
    if (!dbias.empty()) require_elements(dbias, Shape{g_.out_features}, what(), "dbias");
    const auto lock = Engine::get().lock();
    BoundPrimitive& p = backward_weights_[dbias.empty() ? 0 : 1];
    if (p.threads != Engine::threads()) {
      std::vector<std::pair<int, memory::desc>> args{
          {DNNL_ARG_SRC, src_}, {DNNL_ARG_DIFF_DST, dst_}, {DNNL_ARG_DIFF_WEIGHTS, weights_}};
      if (!dbias.empty()) args.emplace_back(DNNL_ARG_DIFF_BIAS, bias_);
      p.build<dnnl::inner_product_backward_weights::primitive_desc, dnnl::inner_product_backward_weights>(
          backward_weights_pd(forward_pd(!dbias.empty()), !dbias.empty()), args);
    }
    p.bind(DNNL_ARG_SRC, x.raw_data());
    p.bind(DNNL_ARG_DIFF_DST, dy.raw_data());
    p.bind(DNNL_ARG_DIFF_WEIGHTS, dw.data());
    if (!dbias.empty()) p.bind(DNNL_ARG_DIFF_BIAS, dbias.data());
    p.run();
  }

 private:
  std::string what() const {
    return "inner product " + std::to_string(g_.in_features) + "->" + std::to_string(g_.out_features);
  }

  /// The reorder that rounds the fp32 weights into the type the primitives read (none in fp32).
  void build_weight_rounding() {
    if (read_weights_ == weights_ || weight_rounding_.threads == Engine::threads()) return;
    const auto& engine = Engine::get().engine();
    const dnnl::reorder::primitive_desc pd(engine, weights_, engine, read_weights_, user_scratchpad_attr());
    weight_rounding_.build<dnnl::reorder::primitive_desc, dnnl::reorder>(
        pd, {{DNNL_ARG_FROM, weights_}, {DNNL_ARG_TO, read_weights_}});
  }

  /// The weights as the forward and backward-data primitives read them: `w`, or its rounded
  /// copy in the staging buffer.
  const void* weights_read(const Tensor& w) {
    if (read_weights_ == weights_) return w.data();
    void* staged = Engine::get().staging().get(read_weights_.get_size());
    weight_rounding_.bind(DNNL_ARG_FROM, w.data());
    weight_rounding_.bind(DNNL_ARG_TO, staged);
    weight_rounding_.run();
    return staged;
  }

  dnnl::inner_product_forward::primitive_desc forward_pd(bool bias) const {
    return compat::inner_product_forward_pd(src_, read_weights_, bias ? bias_ : memory::desc(), dst_,
                                            user_scratchpad_attr());
  }
  dnnl::inner_product_backward_data::primitive_desc backward_data_pd(
      const dnnl::inner_product_forward::primitive_desc& hint) const {
    return compat::inner_product_backward_data_pd(src_, read_weights_, dst_, hint, user_scratchpad_attr());
  }
  dnnl::inner_product_backward_weights::primitive_desc backward_weights_pd(
      const dnnl::inner_product_forward::primitive_desc& hint, bool bias) const {
    return compat::inner_product_backward_weights_pd(src_, weights_, bias ? bias_ : memory::desc(), dst_, hint,
                                                     user_scratchpad_attr());
  }

  ops::InnerProductGeometry g_;
  memory::desc src_, weights_, read_weights_, bias_, dst_;
  BoundPrimitive weight_rounding_;  // fp32 -> the activations' type, when they differ
  BoundPrimitive forward_[2];  // without, with bias
  BoundPrimitive backward_data_;
  BoundPrimitive backward_weights_[2];
};

}  // namespace

std::unique_ptr<ops::InnerProductOp> make_inner_product(const ops::InnerProductGeometry& g, std::string& why) {
  if (g.batch < 1 || g.in_features < 1 || g.out_features < 1) {
    why = "oneDNN inner products need at least one row, input and output feature";
    return nullptr;
  }
  auto op = std::make_unique<OnednnInnerProductOp>(g);
  if (!op->supported()) {
    why = "oneDNN has only its slow reference kernel for this inner product";
    return nullptr;
  }
  return op;
}

}  // namespace tessera::onednn_backend
