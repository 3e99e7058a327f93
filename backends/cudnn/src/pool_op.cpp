// Max and average pooling through cuDNN's pooling calls (cudnnPoolingForward / Backward) on
// channels-last tensors, described like the convolution's (Nd descriptors with NDHWC strides,
// 4D for 2D). Max pooling uses CUDNN_POOLING_MAX_DETERMINISTIC; average pooling divides by the
// in-bounds elements (CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING), as the Kokkos kernels do.
// Max pooling's backward is Tessera's own gather (kokkos_backend::max_pool_backward_gather): cuDNN's took a quarter
// of a bf16 cosmoflow step.
// bf16 and fp16 tensors are described in their type; cuDNN computes in float and rounds each
// output once.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "context.hpp"
#include "cudnn_ops.hpp"
#include "descriptors.hpp"
#include "tessera/backends/kokkos/max_pool_gather_kernels.hpp"

namespace tessera::cudnn_backend {
namespace {

/// Pooling bound to one geometry. cuDNN's max-pooling backward finds each window's maximum by
/// comparing x with the forward output y, which PoolOp::backward is not given: forward keeps
/// its own copy of y (a device-to-device copy of the smaller tensor), so a caller that reuses
/// its output buffer cannot change the gradient.
class CudnnPoolOp final : public ops::PoolOp {
 public:
  explicit CudnnPoolOp(const ops::PoolGeometry& g) : g_(g) {
    const std::string w = what();
    const int rank = g.spatial_rank;
    const auto out = g.out_size();
    set_channels_last(x_, g.batch, g.channels, spatial(g.in_size, rank), w, g.type);
    set_channels_last(y_, g.batch, g.channels, spatial(out, rank), w, g.type);
    const std::vector<int> window = spatial(g.kernel, rank), padding = spatial(g.padding, rank),
                           stride = spatial(g.stride, rank);
    check(cudnnSetPoolingNdDescriptor(pool_.get(), max() ? CUDNN_POOLING_MAX_DETERMINISTIC
                                                         : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                      CUDNN_PROPAGATE_NAN, rank, window.data(), padding.data(), stride.data()),
          "cudnnSetPoolingNdDescriptor", w);
    std::vector<int> dims(static_cast<size_t>(rank + 2));
    check(cudnnGetPoolingNdForwardOutputDim(pool_.get(), x_.get(), rank + 2, dims.data()),
          "cudnnGetPoolingNdForwardOutputDim", w);
    std::vector<int> expected{static_cast<int>(g.batch), static_cast<int>(g.channels)};
    for (const int e : spatial(out, rank)) expected.push_back(e);
    if (dims != expected)
      throw Error("cudnn " + w + ": cuDNN computes another output size than " + g.output_shape().str() +
                  " (internal error)");
  }

  std::string backend() const override { return "cudnn"; }

  void forward(const Tensor& x, const Tensor& y) override {
    require_elements(x, g_.input_shape(), what(), "input");
    require_elements(y, g_.output_shape(), what(), "output");
    Context& ctx = Context::get();
    const auto lock = ctx.lock();
    check(cudnnPoolingForward(ctx.handle(), pool_.get(), &one, x_.get(), x.raw_data(), &zero, y_.get(), y.raw_data()),
          "cudnnPoolingForward", what());
    if (!max()) return;
    const auto n = static_cast<size_t>(y.numel());
    const std::pair<size_t, size_t> all(0, n);
    // On the Kokkos stream, which is cuDNN's: ordered after the pooling, no fence.
    if (g_.type == ElementType::fp32) {
      if (saved_y_.extent(0) != n)
        saved_y_ = DeviceView<float>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::cudnn_pool_output"), n);
      Kokkos::deep_copy(ExecSpace(), saved_y_, Kokkos::subview(y.view(), all));
    } else {
      if (saved_y_half_.extent(0) != n)
        saved_y_half_ =
            DeviceView<uint16_t>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::cudnn_pool_output"), n);
      Kokkos::deep_copy(ExecSpace(), saved_y_half_, Kokkos::subview(y.half_view(), all));
    }
    have_saved_y_ = true;
  }

  void backward(const Tensor& x, const Tensor& dy, const Tensor& dx) override {
    require_elements(x, g_.input_shape(), what(), "input");
    require_elements(dy, g_.output_shape(), what(), "output gradient");
    require_elements(dx, g_.input_shape(), what(), "input gradient");
    if (max() && !have_saved_y_) throw Error("cudnn " + what() + ": backward called before forward");
    if (max()) {
      // On the Kokkos stream, after the forward's copy of y.
      const Tensor y = g_.type == ElementType::fp32 ? Tensor(g_.output_shape(), saved_y_)
                                                    : Tensor(g_.output_shape(), saved_y_half_, g_.type);
      return kokkos_backend::max_pool_backward_gather(g_, x, y, dy, dx);
    }
    Context& ctx = Context::get();
    const auto lock = ctx.lock();
    // Average pooling's gradient does not depend on y; cuDNN still takes a pointer of y's shape.
    const void* y = dy.raw_data();
    check(cudnnPoolingBackward(ctx.handle(), pool_.get(), &one, y_.get(), y, y_.get(), dy.raw_data(), x_.get(),
                               x.raw_data(), &zero, x_.get(), dx.raw_data()),
          "cudnnPoolingBackward", what());
  }

 private:
  bool max() const { return g_.kind == ops::PoolKind::max; }
  std::string what() const { return "pooling " + g_.str(); }

  ops::PoolGeometry g_;
  TensorDesc x_, y_;
  PoolDesc pool_;
  DeviceView<float> saved_y_;          // fp32 layers
  DeviceView<uint16_t> saved_y_half_;  // bf16 and fp16 layers
  bool have_saved_y_ = false;
};

}  // namespace

std::unique_ptr<ops::PoolOp> make_pool(const ops::PoolGeometry& g, std::string& why) {
  g.validate("cudnn backend");
  if (!fits_in_int(g.input_shape().numel())) {
    why = "the input of " + g.str() + " has more elements than cuDNN's 32-bit sizes hold";
    return nullptr;
  }
  return std::make_unique<CudnnPoolOp>(g);
}

}  // namespace tessera::cudnn_backend
