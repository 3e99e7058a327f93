#include "tessera/backends/onednn/onednn_backend.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl_compat.hpp"
#include "onednn_ops.hpp"
#include "tessera/core/kokkos_compat.hpp"

namespace tessera::onednn_backend {
namespace {

/// oneDNN's CPU engine reads and writes tensors in place, so it can serve only builds whose
/// tensors live in host memory.
constexpr bool tensors_on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

constexpr const char* kTensorsOnDevice =
    "this build keeps tensors in device memory, which oneDNN's CPU engine cannot read";

class OnednnBackend final : public ops::Backend {
 public:
  std::string name() const override { return "onednn"; }
  int64_t max_tensor_elements() const override { return kMaxTensorElements; }

 protected:
  std::unique_ptr<ops::ConvOp> create_conv(const ops::ConvGeometry& g, std::string& why) override {
    if (!tensors_on_host) return decline(why);
    return onednn_backend::make_conv(g, why);
  }
  std::unique_ptr<ops::PoolOp> create_pool(const ops::PoolGeometry& g, std::string& why) override {
    if (!tensors_on_host) return decline(why);
    return onednn_backend::make_pool(g, why);
  }
  std::unique_ptr<ops::EltwiseOp> create_eltwise(const ops::EltwiseDesc& d, std::string& why) override {
    if (!tensors_on_host) return decline(why);
    if (ops::activation_info(d.kind).onednn == ops::OnednnEltwise::none) {
      why = "oneDNN has no eltwise algorithm for " + d.str();
      return nullptr;
    }
    return onednn_backend::make_eltwise(d);
  }
  std::unique_ptr<ops::InnerProductOp> create_inner_product(const ops::InnerProductGeometry& g,
                                                            std::string& why) override {
    if (!tensors_on_host) return decline(why);
    return onednn_backend::make_inner_product(g, why);
  }
  std::string lacks_precision(ops::OpKind kind, ElementType type) const override {
    if (type == ElementType::fp32) return {};
    // oneDNN 3.x trains in fp16 on AVX512-FP16 CPUs (Sapphire Rapids and later); none has been
    // at hand to test it on, so the backend does not offer it yet.
    if (type == ElementType::fp16)
      return "no fp16 on CPUs: oneDNN 2.x has no fp16 training kernels, 3.x only for AVX512-FP16, untried in Tessera";
    if (kind != ops::OpKind::conv && kind != ops::OpKind::pool && kind != ops::OpKind::eltwise &&
        kind != ops::OpKind::inner_product)
      return ops::Backend::lacks_precision(kind, type);
    if (!has_bf16_instructions())
      return "this CPU has no bf16 instructions (oneDNN dispatches " + dispatched_isa() +
             "; bf16 needs AVX512-BF16 or AMX, and emulated it runs slower than fp32)";
    return {};
  }
  std::string lacks(ops::OpKind kind) const override {
    // oneDNN's batch normalization computes mean and variance, and the two backward sums,
    // inside one primitive call each, with no point between where they could be reduced
    // across ranks (and no Σx² output).
    if (kind == ops::OpKind::batch_norm)
      return "oneDNN batch norm computes its statistics and uses them in one call, leaving no point to sum them across "
             "ranks";
    return ops::Backend::lacks(kind);
  }

 private:
  static std::nullptr_t decline(std::string& why) {
    why = kTensorsOnDevice;
    return nullptr;
  }
};

const char* runtime_name(unsigned runtime) {
  switch (runtime) {
    case DNNL_RUNTIME_OMP: return "OpenMP";
    case DNNL_RUNTIME_TBB: return "TBB";
    case DNNL_RUNTIME_SEQ: return "sequential";
    case DNNL_RUNTIME_THREADPOOL: return "threadpool";
    default: return "other";
  }
}

}  // namespace

std::unique_ptr<ops::Backend> make_backend() { return std::make_unique<OnednnBackend>(); }

std::string version_string() {
  const dnnl::version_t* v = dnnl::version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " (cpu runtime " + runtime_name(v->cpu_runtime) + ", ISA " + compat::isa_name(dnnl::get_effective_cpu_isa()) + ")";
}

std::string dispatched_isa() { return compat::isa_name(dnnl::get_effective_cpu_isa()); }

bool has_bf16_instructions() {
  return compat::isa_has_bf16(dnnl::get_effective_cpu_isa());
}

}  // namespace tessera::onednn_backend
