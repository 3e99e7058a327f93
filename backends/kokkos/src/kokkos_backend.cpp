#include "tessera/backends/kokkos/kokkos_backend.hpp"

namespace tessera::kokkos_backend {
namespace {

class KokkosBackend final : public ops::Backend {
 public:
  std::string name() const override { return "kokkos"; }
  std::unique_ptr<ops::ConvOp> make_conv(const ops::ConvGeometry& g) override { return kokkos_backend::make_conv(g); }
  std::unique_ptr<ops::PoolOp> make_pool(const ops::PoolGeometry& g) override { return kokkos_backend::make_pool(g); }
  std::unique_ptr<ops::BatchNormOp> make_batch_norm(const ops::BatchNormGeometry& g) override {
    return kokkos_backend::make_batch_norm(g);
  }
  std::unique_ptr<ops::EltwiseOp> make_eltwise(const ops::EltwiseDesc& d) override {
    return kokkos_backend::make_eltwise(d);
  }
  std::unique_ptr<ops::InnerProductOp> make_inner_product(const ops::InnerProductGeometry& g) override {
    return kokkos_backend::make_inner_product(g);
  }
};

}  // namespace

std::unique_ptr<ops::Backend> make_backend() { return std::make_unique<KokkosBackend>(); }

}  // namespace tessera::kokkos_backend
