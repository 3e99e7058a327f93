// The Kokkos reference inner product: the templated kernels of inner_product_kernels.hpp in
// float, over 2D views of the flat tensors.
#include "tessera/backends/kokkos/inner_product_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend {
namespace {

class KokkosInnerProduct final : public ops::InnerProductOp {
 public:
  explicit KokkosInnerProduct(const ops::InnerProductGeometry& g) : g_(g) {}

  std::string backend() const override { return "kokkos"; }

  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) override {
    check(x, g_.batch, g_.in_features, "x");
    check(w, g_.out_features, g_.in_features, "w");
    check(y, g_.batch, g_.out_features, "y");
    if (!bias.empty()) check_bias(bias);
    inner_product_forward<float>(matrix(x, g_.batch, g_.in_features), matrix(w, g_.out_features, g_.in_features),
                                 vector(bias), matrix(y, g_.batch, g_.out_features));
  }

  void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) override {
    check(dy, g_.batch, g_.out_features, "dy");
    check(w, g_.out_features, g_.in_features, "w");
    check(dx, g_.batch, g_.in_features, "dx");
    inner_product_backward_data<float>(matrix(dy, g_.batch, g_.out_features),
                                       matrix(w, g_.out_features, g_.in_features),
                                       matrix(dx, g_.batch, g_.in_features));
  }

  void backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) override {
    check(x, g_.batch, g_.in_features, "x");
    check(dy, g_.batch, g_.out_features, "dy");
    check(dw, g_.out_features, g_.in_features, "dw");
    if (!dbias.empty()) check_bias(dbias);
    inner_product_backward_weights<float>(matrix(x, g_.batch, g_.in_features), matrix(dy, g_.batch, g_.out_features),
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
  void check(const Tensor& t, int64_t rows, int64_t cols, const char* what) const {
    require_shape(t.numel() == rows * cols, std::string("kokkos inner product ") + std::to_string(g_.in_features) +
                                                "->" + std::to_string(g_.out_features) + ": " + what + " of shape " +
                                                t.shape().str() + " is not " + std::to_string(rows) + "x" +
                                                std::to_string(cols));
  }
  void check_bias(const Tensor& b) const { check(b, 1, g_.out_features, "bias"); }

  ops::InnerProductGeometry g_;
};

}  // namespace

std::unique_ptr<ops::InnerProductOp> make_inner_product(const ops::InnerProductGeometry& g) {
  return std::make_unique<KokkosInnerProduct>(g);
}

}  // namespace tessera::kokkos_backend
