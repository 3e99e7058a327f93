// The activations whose row in ops/activations.hpp names a oneDNN algorithm, through oneDNN's
// eltwise primitives over the flat tensor.
#include <algorithm>
#include <cstdint>
#include <map>

#include "dnnl_compat.hpp"
#include "engine.hpp"
#include "onednn_ops.hpp"

namespace tessera::onednn_backend {
namespace {

using dnnl::memory;

/// An activation is not bound to a shape, so primitives are kept per element count; a layer
/// sees one or two counts (training and a smaller last batch) plus, for tensors larger than
/// oneDNN indexes, the piece size and the last piece's, hence the small cap.
class OnednnEltwiseOp final : public ops::EltwiseOp {
 public:
  OnednnEltwiseOp(const ops::EltwiseDesc& d, int64_t max_piece) : desc_(d), max_piece_(max_piece) {}

  std::string backend() const override { return "onednn"; }

  void forward(const Tensor& x, const Tensor& y) override {
    require_same(x, y, "y");
    const auto lock = Engine::get().lock();
    for (int64_t at = 0; at < x.numel(); at += max_piece_) {
      const int64_t count = std::min(max_piece_, x.numel() - at);
      Primitives& p = primitives(count);
      if (p.forward.threads != Engine::threads()) {
        const memory::desc md = flat(count);
        p.forward.build<dnnl::eltwise_forward::primitive_desc, dnnl::eltwise_forward>(
            forward_pd(md), {{DNNL_ARG_SRC, md}, {DNNL_ARG_DST, md}});
      }
      p.forward.bind(DNNL_ARG_SRC, element_at(x, at));
      p.forward.bind(DNNL_ARG_DST, element_at(y, at));
      p.forward.run();
    }
  }

  void backward(const Tensor& x, const Tensor& dy, const Tensor& dx) override {
    require_same(x, dy, "dy");
    require_same(x, dx, "dx");
    const auto lock = Engine::get().lock();
    for (int64_t at = 0; at < x.numel(); at += max_piece_) {
      const int64_t count = std::min(max_piece_, x.numel() - at);
      Primitives& p = primitives(count);
      if (p.backward.threads != Engine::threads()) {
        const memory::desc md = flat(count);
        const auto pd = compat::eltwise_backward_pd(algorithm(), md, alpha(), 0.0f, forward_pd(md),
                                                    user_scratchpad_attr());
        p.backward.build<dnnl::eltwise_backward::primitive_desc, dnnl::eltwise_backward>(
            pd, {{DNNL_ARG_SRC, md}, {DNNL_ARG_DIFF_DST, md}, {DNNL_ARG_DIFF_SRC, md}});
      }
      p.backward.bind(DNNL_ARG_SRC, element_at(x, at));
      p.backward.bind(DNNL_ARG_DIFF_DST, element_at(dy, at));
      p.backward.bind(DNNL_ARG_DIFF_SRC, element_at(dx, at));
      p.backward.run();
    }
  }

 private:
  struct Primitives {
    BoundPrimitive forward, backward;
  };
  static constexpr size_t max_cached_counts = 4;

  Primitives& primitives(int64_t count) {
    auto it = by_count_.find(count);
    if (it != by_count_.end()) return it->second;
    if (by_count_.size() >= max_cached_counts) by_count_.clear();
    return by_count_[count];
  }

  memory::desc flat(int64_t count) const {
    return memory::desc({count}, data_type_of(desc_.type), memory::format_tag::a);
  }

  // Each row of ops/activations.hpp names its algorithm; make_eltwise takes only rows that
  // have one. Both sides take the negative branch at 0, as the Kokkos reference does.
  dnnl::algorithm algorithm() const {
    switch (ops::activation_info(desc_.kind).onednn) {
      case ops::OnednnEltwise::relu: return dnnl::algorithm::eltwise_relu;
      case ops::OnednnEltwise::elu: return dnnl::algorithm::eltwise_elu;
      case ops::OnednnEltwise::tanh: return dnnl::algorithm::eltwise_tanh;
      case ops::OnednnEltwise::linear: return dnnl::algorithm::eltwise_linear;
      case ops::OnednnEltwise::logistic: return dnnl::algorithm::eltwise_logistic;
      case ops::OnednnEltwise::none: break;
    }
    throw Error("onednn " + desc_.str() + ": no oneDNN algorithm");
  }
  /// The key's value; rows without a key pass 0 (plain ReLU's slope, unused by tanh).
  float alpha() const { return ops::activation_info(desc_.kind).key.name ? desc_.alpha : 0.0f; }

  dnnl::eltwise_forward::primitive_desc forward_pd(const memory::desc& md) const {
    return compat::eltwise_forward_pd(algorithm(), md, alpha(), 0.0f, user_scratchpad_attr());
  }

  void require_same(const Tensor& x, const Tensor& other, const char* what) const {
    require_shape(!x.empty() && x.numel() == other.numel(), "onednn " + desc_.str() + ": x of shape " +
                                                                x.shape().str() + " and " + what + " of shape " +
                                                                other.shape().str() + " differ in size");
    if (x.type() != desc_.type || other.type() != desc_.type)
      throw Error("onednn " + desc_.str() + ": x is " + element_type_name(x.type()) + " and " + what + " " +
                  element_type_name(other.type()) + ", expected " + element_type_name(desc_.type));
  }

  ops::EltwiseDesc desc_;
  int64_t max_piece_;
  std::map<int64_t, Primitives> by_count_;
};

}  // namespace

std::unique_ptr<ops::EltwiseOp> make_eltwise(const ops::EltwiseDesc& d, int64_t max_piece) {
  require_shape(max_piece >= 1 && max_piece <= kMaxTensorElements,
                "onednn " + d.str() + ": pieces of " + std::to_string(max_piece) + " elements are outside [1, " +
                    std::to_string(kMaxTensorElements) + "]");
  return std::make_unique<OnednnEltwiseOp>(d, max_piece);
}

std::unique_ptr<ops::EltwiseOp> make_eltwise_in_pieces(const ops::EltwiseDesc& d, int64_t max_piece) {
  return make_eltwise(d, max_piece);
}

}  // namespace tessera::onednn_backend
