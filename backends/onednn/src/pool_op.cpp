// Max and average pooling through oneDNN on plain channels-last tensors. Max pooling keeps
// oneDNN's workspace (where each window's maximum was) from forward to backward.
#include <utility>
#include <vector>

#include "dnnl_compat.hpp"
#include "engine.hpp"
#include "onednn_ops.hpp"

namespace tessera::onednn_backend {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

class OnednnPoolOp final : public ops::PoolOp {
 public:
  explicit OnednnPoolOp(const ops::PoolGeometry& g) : g_(g) {
    // A 2D pooling runs as a 2D primitive: the same kernels, no depth loop.
    const bool is_2d = g.spatial_rank == 2;
    const auto out = g.out_size();
    memory::dims in_dims{g.batch, g.channels}, out_dims{g.batch, g.channels};
    for (size_t i = is_2d ? 1 : 0; i < 3; ++i) {
      in_dims.push_back(g.in_size[i]);
      out_dims.push_back(out[i]);
      window_.kernel.push_back(g.kernel[i]);
      window_.strides.push_back(g.stride[i]);
      window_.padding.push_back(g.padding[i]);  // our sizes round down like oneDNN's: the same after
    }
    src_ = memory::desc(in_dims, data_type_of(g.type), is_2d ? tag::nhwc : tag::ndhwc);
    dst_ = memory::desc(out_dims, data_type_of(g.type), is_2d ? tag::nhwc : tag::ndhwc);
  }

  std::string backend() const override { return "onednn"; }

  bool supported() const {
    try {
      const auto fwd = forward_pd();
      return !is_reference(fwd) && !is_reference(backward_pd(fwd));
    } catch (const dnnl::error&) {
      return false;
    }
  }

  void forward(const Tensor& x, const Tensor& y) override {
    require_elements(x, g_.input_shape(), what(), "input", g_.type);
    require_elements(y, g_.output_shape(), what(), "output", g_.type);
    const auto lock = Engine::get().lock();
    if (forward_.threads != Engine::threads()) {
      const auto pd = forward_pd();
      std::vector<std::pair<int, memory::desc>> args{{DNNL_ARG_SRC, src_}, {DNNL_ARG_DST, dst_}};
      if (max()) args.emplace_back(DNNL_ARG_WORKSPACE, pd.workspace_desc());
      workspace_bytes_ = max() ? pd.workspace_desc().get_size() : 0;
      forward_.build<dnnl::pooling_forward::primitive_desc, dnnl::pooling_forward>(pd, args);
    }
    forward_.bind(DNNL_ARG_SRC, x.raw_data());
    forward_.bind(DNNL_ARG_DST, y.raw_data());
    if (max()) forward_.bind(DNNL_ARG_WORKSPACE, workspace_.get(workspace_bytes_));
    forward_.run();
    have_workspace_ = true;
  }

  void backward(const Tensor& x, const Tensor& dy, const Tensor& dx) override {
    require_elements(x, g_.input_shape(), what(), "input", g_.type);
    require_elements(dy, g_.output_shape(), what(), "output gradient", g_.type);
    require_elements(dx, g_.input_shape(), what(), "input gradient", g_.type);
    if (max() && !have_workspace_) throw Error("onednn " + what() + ": backward called before forward");
    const auto lock = Engine::get().lock();
    if (backward_.threads != Engine::threads()) {
      const auto fwd = forward_pd();
      const auto pd = backward_pd(fwd);
      std::vector<std::pair<int, memory::desc>> args{{DNNL_ARG_DIFF_DST, dst_}, {DNNL_ARG_DIFF_SRC, src_}};
      if (max()) args.emplace_back(DNNL_ARG_WORKSPACE, fwd.workspace_desc());
      backward_.build<dnnl::pooling_backward::primitive_desc, dnnl::pooling_backward>(pd, args);
    }
    backward_.bind(DNNL_ARG_DIFF_DST, dy.raw_data());
    backward_.bind(DNNL_ARG_DIFF_SRC, dx.raw_data());
    if (max()) backward_.bind(DNNL_ARG_WORKSPACE, workspace_.get(workspace_bytes_));
    backward_.run();
  }

 private:
  bool max() const { return g_.kind == ops::PoolKind::max; }
  std::string what() const { return "pooling " + g_.str(); }
  dnnl::algorithm algorithm() const {
    return max() ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
  }

  dnnl::pooling_forward::primitive_desc forward_pd() const {
    return compat::pooling_forward_pd(algorithm(), src_, dst_, window_, user_scratchpad_attr());
  }
  dnnl::pooling_backward::primitive_desc backward_pd(const dnnl::pooling_forward::primitive_desc& hint) const {
    return compat::pooling_backward_pd(algorithm(), src_, dst_, window_, hint, user_scratchpad_attr());
  }

  ops::PoolGeometry g_;
  memory::desc src_, dst_;
  compat::PoolWindow window_;
  BoundPrimitive forward_, backward_;
  // Belongs to this op (not shared): it must survive from forward to backward.
  GrowOnlyBuffer workspace_;
  size_t workspace_bytes_ = 0;
  bool have_workspace_ = false;
};

}  // namespace

std::unique_ptr<ops::PoolOp> make_pool(const ops::PoolGeometry& g, std::string& why) {
  g.validate("onednn backend");
  auto op = std::make_unique<OnednnPoolOp>(g);
  if (!op->supported()) {
    why = "oneDNN has only its slow reference kernel for " + g.str();
    return nullptr;
  }
  return op;
}

}  // namespace tessera::onednn_backend
