#include "tessera/backends/cudnn/cudnn_backend.hpp"

#include <cudnn.h>

#include <type_traits>

#include "context.hpp"
#include "cudnn_ops.hpp"

namespace tessera::cudnn_backend {
namespace {

/// cuDNN reads and writes device pointers, so it serves only builds whose tensors live in
/// CUDA device memory (not a host build, nor UVM, whose pages would migrate under it).
constexpr bool tensors_on_device = std::is_same<MemSpace, Kokkos::CudaSpace>::value;

std::string version(size_t v) {
  // cuDNN 9 numbers its versions major·10000 + minor·100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

constexpr const char* kTensorsOnHost = "this build keeps tensors in host memory, which cuDNN cannot read";

class CudnnBackend final : public ops::Backend {
 public:
  std::string name() const override { return "cudnn"; }
  // cuDNN's tensor descriptors take int dimensions and strides, and its documentation limits
  // a tensor to 2 giga-elements; larger ones are left to the Kokkos backend.
  int64_t max_tensor_elements() const override { return 2147483647; }

 protected:
  std::unique_ptr<ops::ConvOp> create_conv(const ops::ConvGeometry& g, std::string& why) override {
    if (!tensors_on_device) return decline(why);
    return cudnn_backend::make_conv(g, why);
  }
  std::unique_ptr<ops::PoolOp> create_pool(const ops::PoolGeometry& g, std::string& why) override {
    if (!tensors_on_device) return decline(why);
    return cudnn_backend::make_pool(g, why);
  }
  // Convolutions and pooling take bf16 and fp16 (tensor-core math, fp32 sums); batch norm and
  // activations are the Kokkos backend's in every type.
  std::string lacks_precision(ops::OpKind kind, ElementType type) const override {
    if (kind == ops::OpKind::conv || kind == ops::OpKind::pool) return {};
    return ops::Backend::lacks_precision(kind, type);
  }
  std::string lacks(ops::OpKind kind) const override {
    switch (kind) {
      // cudnnBatchNormalizationForwardTraining / Backward compute the batch statistics and the
      // two backward sums inside one call each, with no Σx² output and a variance where the
      // interface passes 1/σ.
      case ops::OpKind::batch_norm:
        return "cuDNN batch norm computes its statistics and uses them in one call, leaving no point to sum them "
               "across ranks";
      // One Kokkos CUDA kernel per pass is as fast as a memory-bound map gets.
      case ops::OpKind::eltwise:
        return "cuDNN activations have no LeakyReLU, and their backward needs the forward output";
      case ops::OpKind::inner_product:
        return "an inner product is a gemm, which the Kokkos backend runs through cuBLAS";
      default: return ops::Backend::lacks(kind);
    }
  }

 private:
  static std::nullptr_t decline(std::string& why) {
    why = kTensorsOnHost;
    return nullptr;
  }
};

}  // namespace

std::unique_ptr<ops::Backend> make_backend() { return std::make_unique<CudnnBackend>(); }

std::string version_string() {
  const Options o = options();
  return "cuDNN " + version(cudnnGetVersion()) + " (headers " + version(CUDNN_VERSION) + "), " +
         (o.tf32 ? "TF32 allowed in convolutions" : "FMA math (TF32 off)") + ", " +
         (o.benchmark ? "benchmarked" : "heuristic") + " algorithms, " +
         (o.deterministic ? "deterministic only" : "non-deterministic allowed");
}

size_t workspace_bytes() {
  const Context* c = Context::existing();
  return c ? c->workspace_capacity() : 0;
}

}  // namespace tessera::cudnn_backend
