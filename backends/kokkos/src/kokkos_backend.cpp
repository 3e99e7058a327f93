#include "tessera/backends/kokkos/kokkos_backend.hpp"

namespace tessera::kokkos_backend {
namespace {

/// Every op, always: the reference the other backends are tested against and fall back to.
class KokkosBackend final : public ops::Backend {
 public:
  std::string name() const override { return "kokkos"; }

 protected:
  std::unique_ptr<ops::ConvOp> create_conv(const ops::ConvGeometry& g, std::string&) override {
    return kokkos_backend::make_conv(g);
  }
  std::unique_ptr<ops::PoolOp> create_pool(const ops::PoolGeometry& g, std::string&) override {
    return kokkos_backend::make_pool(g);
  }
  std::unique_ptr<ops::BatchNormOp> create_batch_norm(const ops::BatchNormGeometry& g, std::string&) override {
    return kokkos_backend::make_batch_norm(g);
  }
  std::unique_ptr<ops::EltwiseOp> create_eltwise(const ops::EltwiseDesc& d, std::string&) override {
    return kokkos_backend::make_eltwise(d);
  }
  std::unique_ptr<ops::InnerProductOp> create_inner_product(const ops::InnerProductGeometry& g, std::string&) override {
    return kokkos_backend::make_inner_product(g);
  }
  std::string lacks_precision(ops::OpKind kind, ElementType type) const override {
    // 16-bit activations with fp32 arithmetic: activations (bf16, fp16), inner products (bf16,
    // fp16), batch norm, convolutions and pooling (bf16), the last three on fp32 copies
    // (fp32_staging.hpp). bf16 thus trains on any CPU, where oneDNN has no bf16 instructions
    // to run it on; fp16 convolutions are cuDNN's.
    if (type == ElementType::fp32) return {};
    if (kind == ops::OpKind::eltwise || kind == ops::OpKind::inner_product) return {};
    if (type == ElementType::bf16 &&
        (kind == ops::OpKind::batch_norm || kind == ops::OpKind::conv || kind == ops::OpKind::pool))
      return {};
    return ops::Backend::lacks_precision(kind, type);
  }
};

}  // namespace

std::unique_ptr<ops::Backend> make_backend() { return std::make_unique<KokkosBackend>(); }

}  // namespace tessera::kokkos_backend
