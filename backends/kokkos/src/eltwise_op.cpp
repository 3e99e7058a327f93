// The Kokkos reference activations: the templated kernels of activation_kernels.hpp in float,
// and their 16-bit variant for bf16 and fp16 tensors (computing in float).
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
    if (desc_.type == ElementType::fp32)
      eltwise_forward<float>(f_, x.view(), x.numel(), y.view());
    else
      eltwise_forward_half(f_, x.half_view(), x.numel(), y.half_view(), desc_.type);
  }

  void backward(const Tensor& x, const Tensor& dy, const Tensor& dx) override {
    require_same(x, dy, "dy");
    require_same(x, dx, "dx");
    if (desc_.type == ElementType::fp32)
      eltwise_backward<float>(f_, x.view(), dy.view(), x.numel(), dx.view());
    else
      eltwise_backward_half(f_, x.half_view(), dy.half_view(), x.numel(), dx.half_view(), desc_.type);
  }

 private:
  void require_same(const Tensor& x, const Tensor& other, const char* what) const {
    require_shape(x.numel() == other.numel(), "kokkos " + desc_.str() + ": x of shape " + x.shape().str() + " and " +
                                                  what + " of shape " + other.shape().str() + " differ in size");
    if (x.type() != desc_.type || other.type() != desc_.type)
      throw Error("kokkos " + desc_.str() + ": x is " + element_type_name(x.type()) + " and " + what + " " +
                  element_type_name(other.type()) + ", expected " + element_type_name(desc_.type));
  }

  ops::EltwiseDesc desc_;
  ActivationFunction<float> f_;
};

}  // namespace

std::unique_ptr<ops::EltwiseOp> make_eltwise(const ops::EltwiseDesc& d) { return std::make_unique<KokkosEltwise>(d); }

}  // namespace tessera::kokkos_backend
