#include <utility>

#include "fp32_staging.hpp"
#include "tessera/backends/kokkos/conv_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend {
namespace {

/// The portable ConvOp: im2col + gemm in float, with a grow-only column workspace. A bf16
/// layer runs the same kernels on fp32 copies (fp32_staging.hpp).
class KokkosConvOp final : public ops::ConvOp {
 public:
  explicit KokkosConvOp(const ops::ConvGeometry& g) : g_(g), staging_(g.type) {}

  std::string backend() const override { return "kokkos"; }

  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) override {
    check(x, g_.input_shape(), "input");
    check(w, g_.weight_shape(), "weight", true);
    if (!bias.empty()) check(bias, Shape{g_.out_channels}, "bias", true);
    check(y, g_.output_shape(), "output");
    const Tensor& ya = staging_.output(y_, y);
    conv_forward<float>(g_, flat(staging_.widened(x_, x)), flat(staging_.weights(w_, w)),
                        bias.empty() ? DeviceView<const float>() : flat(bias), flat(ya), workspace_);
    staging_.store(y, ya);
  }

  void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) override {
    check(dy, g_.output_shape(), "output gradient");
    check(w, g_.weight_shape(), "weight", true);
    check(dx, g_.input_shape(), "input gradient");
    const Tensor& dxa = staging_.output(x_, dx);
    conv_backward_data<float>(g_, flat(staging_.widened(y_, dy)), flat(staging_.weights(w_, w)), flat(dxa),
                              workspace_);
    staging_.store(dx, dxa);
  }

  void backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) override {
    check(x, g_.input_shape(), "input");
    check(dy, g_.output_shape(), "output gradient");
    check(dw, g_.weight_shape(), "weight gradient", true);
    if (!dbias.empty()) check(dbias, Shape{g_.out_channels}, "bias gradient", true);
    conv_backward_weights<float>(g_, flat(staging_.widened(x_, x)), flat(staging_.widened(y_, dy)), flat(dw),
                                 dbias.empty() ? DeviceView<float>() : flat(dbias), workspace_);
  }

 private:
  // Only the element count matters to the kernels, so a [N, H, W, C] tensor may carry a
  // [N, 1, H, W, C] geometry's data and the like.
  void check(const Tensor& t, const Shape& expected, const char* what, bool parameter = false) const {
    const ElementType type = parameter ? ElementType::fp32 : g_.type;
    if (!t.empty() && t.type() != type)
      throw Error("kokkos convolution " + g_.str() + ": " + what + " is " + element_type_name(t.type()) +
                  ", expected " + element_type_name(type));
    if (t.empty() || t.numel() != expected.numel())
      throw ShapeError("kokkos convolution " + g_.str() + ": " + what + " has shape " + t.shape().str() +
                       ", expected " + expected.str());
  }
  static DeviceView<float> flat(const Tensor& t) {
    return Kokkos::subview(t.view(), std::make_pair<int64_t, int64_t>(0, t.numel()));
  }

  ops::ConvGeometry g_;
  ConvWorkspace<float> workspace_;
  Fp32Staging staging_;
  // A bf16 layer's fp32 copies: x or dx, y or dy, the rounded weights.
  Tensor x_, y_, w_;
};

}  // namespace

std::unique_ptr<ops::ConvOp> make_conv(const ops::ConvGeometry& g) {
  g.validate("kokkos backend");
  return std::make_unique<KokkosConvOp>(g);
}

}  // namespace tessera::kokkos_backend
