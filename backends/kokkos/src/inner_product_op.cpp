// The Kokkos reference inner product: the templated kernels of inner_product_kernels.hpp in
// float, over 2D views of the flat tensors. A bf16 or fp16 layer runs them on fp32 copies
// (fp32_staging.hpp). The weight and bias gradients stay fp32.
#include "fp32_staging.hpp"
#include "tessera/backends/kokkos/inner_product_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend {
namespace {

class KokkosInnerProduct final : public ops::InnerProductOp {
 public:
  explicit KokkosInnerProduct(const ops::InnerProductGeometry& g) : g_(g), staging_(g.type) {}

  std::string backend() const override { return "kokkos"; }

  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) override {
    check(x, g_.batch, g_.in_features, "x");
    check(w, g_.out_features, g_.in_features, "w", true);
    check(y, g_.batch, g_.out_features, "y");
    if (!bias.empty()) check_bias(bias);
    const Tensor& ya = staging_.output(y_, y);
    inner_product_forward<float>(matrix(staging_.widened(x_, x), g_.batch, g_.in_features),
                                 matrix(staging_.weights(w_, w), g_.out_features, g_.in_features), vector(bias),
                                 matrix(ya, g_.batch, g_.out_features));
    staging_.store(y, ya);
  }

  void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) override {
    check(dy, g_.batch, g_.out_features, "dy");
    check(w, g_.out_features, g_.in_features, "w", true);
    check(dx, g_.batch, g_.in_features, "dx");
    const Tensor& dxa = staging_.output(x_, dx);
    inner_product_backward_data<float>(matrix(staging_.widened(y_, dy), g_.batch, g_.out_features),
                                       matrix(staging_.weights(w_, w), g_.out_features, g_.in_features),
                                       matrix(dxa, g_.batch, g_.in_features));
    staging_.store(dx, dxa);
  }

  void backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) override {
    check(x, g_.batch, g_.in_features, "x");
    check(dy, g_.batch, g_.out_features, "dy");
    check(dw, g_.out_features, g_.in_features, "dw", true);
    if (!dbias.empty()) check_bias(dbias);
    inner_product_backward_weights<float>(matrix(staging_.widened(x_, x), g_.batch, g_.in_features),
                                          matrix(staging_.widened(y_, dy), g_.batch, g_.out_features),
                                          matrix(dw, g_.out_features, g_.in_features), vector(dbias));
  }

 private:
  static UnmanagedMatrix<float> matrix(const Tensor& t, int64_t rows, int64_t cols) {
    return UnmanagedMatrix<float>(t.data(), static_cast<size_t>(rows), static_cast<size_t>(cols));
  }
  static UnmanagedDeviceView<float> vector(const Tensor& t) {
    return t.empty() ? UnmanagedDeviceView<float>()
                     : UnmanagedDeviceView<float>(t.data(), static_cast<size_t>(t.numel()));
  }
  /// Activations (x, y and their gradients) are of the layer's type, `parameter`s (weights,
  /// bias and their gradients) fp32: the master weights.
  void check(const Tensor& t, int64_t rows, int64_t cols, const char* what, bool parameter = false) const {
    const ElementType expected = parameter ? ElementType::fp32 : g_.type;
    if (t.type() != expected)
      throw Error(std::string("kokkos inner product: ") + what + " is " + element_type_name(t.type()) + ", expected " +
                  element_type_name(expected));
    require_shape(t.numel() == rows * cols, std::string("kokkos inner product ") + std::to_string(g_.in_features) +
                                                "->" + std::to_string(g_.out_features) + ": " + what + " of shape " +
                                                t.shape().str() + " is not " + std::to_string(rows) + "x" +
                                                std::to_string(cols));
  }
  void check_bias(const Tensor& b) const { check(b, 1, g_.out_features, "bias", true); }

  ops::InnerProductGeometry g_;
  Fp32Staging staging_;
  // fp32 copies of a 16-bit layer's activations: x or dx, y or dy; its rounded weights.
  Tensor x_, y_, w_;
};

}  // namespace

std::unique_ptr<ops::InnerProductOp> make_inner_product(const ops::InnerProductGeometry& g) {
  return std::make_unique<KokkosInnerProduct>(g);
}

}  // namespace tessera::kokkos_backend
