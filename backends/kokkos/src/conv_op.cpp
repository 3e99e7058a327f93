#include <utility>

#include "tessera/backends/kokkos/conv_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend {
namespace {

/// The portable ConvOp: im2col + gemm in float, with a grow-only column workspace.
class KokkosConvOp final : public ops::ConvOp {
 public:
  explicit KokkosConvOp(const ops::ConvGeometry& g) : g_(g) {}

  std::string backend() const override { return "kokkos"; }

  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) override {
    check(x, g_.input_shape(), "input");
    check(w, g_.weight_shape(), "weight");
    if (!bias.empty()) check(bias, Shape{g_.out_channels}, "bias");
    check(y, g_.output_shape(), "output");
    conv_forward<float>(g_, flat(x), flat(w), bias.empty() ? DeviceView<const float>() : flat(bias), flat(y),
                        workspace_);
  }

  void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) override {
    check(dy, g_.output_shape(), "output gradient");
    check(w, g_.weight_shape(), "weight");
    check(dx, g_.input_shape(), "input gradient");
    conv_backward_data<float>(g_, flat(dy), flat(w), flat(dx), workspace_);
  }

  void backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) override {
    check(x, g_.input_shape(), "input");
    check(dy, g_.output_shape(), "output gradient");
    check(dw, g_.weight_shape(), "weight gradient");
    if (!dbias.empty()) check(dbias, Shape{g_.out_channels}, "bias gradient");
    conv_backward_weights<float>(g_, flat(x), flat(dy), flat(dw), dbias.empty() ? DeviceView<float>() : flat(dbias),
                                 workspace_);
  }

 private:
  // Only the element count matters to the kernels, so a [N, H, W, C] tensor may carry a
  // [N, 1, H, W, C] geometry's data and the like.
  void check(const Tensor& t, const Shape& expected, const char* what) const {
    if (t.empty() || t.numel() != expected.numel())
      throw ShapeError("kokkos convolution " + g_.str() + ": " + what + " has shape " + t.shape().str() +
                       ", expected " + expected.str());
  }
  static DeviceView<float> flat(const Tensor& t) {
    return Kokkos::subview(t.view(), std::make_pair<int64_t, int64_t>(0, t.numel()));
  }

  ops::ConvGeometry g_;
  ConvWorkspace<float> workspace_;
};

}  // namespace

std::unique_ptr<ops::ConvOp> make_conv(const ops::ConvGeometry& g) {
  g.validate("kokkos backend");
  return std::make_unique<KokkosConvOp>(g);
}

}  // namespace tessera::kokkos_backend
