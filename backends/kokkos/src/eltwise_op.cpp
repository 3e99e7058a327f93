// The Kokkos reference activations: the templated kernels of activation_kernels.hpp in float.
#include "tessera/backends/kokkos/activation_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend {
namespace {

class KokkosEltwise final : public ops::EltwiseOp {
 public:
  explicit KokkosEltwise(const ops::EltwiseDesc& d) : desc_(d), f_{d.kind, d.alpha} {}

  std::string backend() const override { return "kokkos"; }

  void forward(const Tensor& x, const Tensor& y) override {
    require_same(x, y, "y");
    eltwise_forward<float>(f_, x.view(), x.numel(), y.view());
  }

  void backward(const Tensor& x, const Tensor& dy, const Tensor& dx) override {
    require_same(x, dy, "dy");
    require_same(x, dx, "dx");
    eltwise_backward<float>(f_, x.view(), dy.view(), x.numel(), dx.view());
  }

 private:
  void require_same(const Tensor& x, const Tensor& other, const char* what) const {
    require_shape(x.numel() == other.numel(), "kokkos " + desc_.str() + ": x of shape " + x.shape().str() + " and " +
                                                  what + " of shape " + other.shape().str() + " differ in size");
  }

  ops::EltwiseDesc desc_;
  ActivationFunction<float> f_;
};

}  // namespace

std::unique_ptr<ops::EltwiseOp> make_eltwise(const ops::EltwiseDesc& d) { return std::make_unique<KokkosEltwise>(d); }

}  // namespace tessera::kokkos_backend
