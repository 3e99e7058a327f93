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

class CudnnBackend final : public ops::Backend {
 public:
  std::string name() const override { return "cudnn"; }
  std::unique_ptr<ops::ConvOp> make_conv(const ops::ConvGeometry& g) override {
    if (!tensors_on_device) return nullptr;
    return cudnn_backend::make_conv(g);
  }
  std::unique_ptr<ops::PoolOp> make_pool(const ops::PoolGeometry& g) override {
    if (!tensors_on_device) return nullptr;
    return cudnn_backend::make_pool(g);
  }
  /// cuDNN's batch normalization computes the batch statistics and the two backward sums
  /// inside one call each (cudnnBatchNormalizationForwardTraining / Backward), with no way to
  /// reduce them across ranks between the stages BatchNormOp exposes, no Σx² output, and a
  /// variance where the interface passes 1/σ; the Kokkos CUDA kernels serve it.
  std::unique_ptr<ops::BatchNormOp> make_batch_norm(const ops::BatchNormGeometry&) override { return nullptr; }
  /// cuDNN's activations have no LeakyReLU, and their backward needs the forward output y,
  /// which EltwiseOp::backward is not given (it would cost another pass to recompute); one
  /// Kokkos CUDA kernel per pass is as fast as a memory-bound map gets.
  std::unique_ptr<ops::EltwiseOp> make_eltwise(const ops::EltwiseDesc&) override { return nullptr; }
  /// An inner product is a gemm: the Kokkos Kernels gemm of the Kokkos backend calls cuBLAS
  /// in a CUDA build.
  std::unique_ptr<ops::InnerProductOp> make_inner_product(const ops::InnerProductGeometry&) override {
    return nullptr;
  }
};

}  // namespace

std::unique_ptr<ops::Backend> make_backend() { return std::make_unique<CudnnBackend>(); }

std::string version_string() {
  const Options o = options();
  return "cuDNN " + version(cudnnGetVersion()) + " (headers " + version(CUDNN_VERSION) + "), " +
         (o.tf32 ? "TF32 allowed in convolutions" : "FMA math (TF32 off)") + ", " +
         (o.benchmark ? "benchmarked" : "heuristic") + " algorithms";
}

size_t workspace_bytes() {
  const Context* c = Context::existing();
  return c ? c->workspace_capacity() : 0;
}

}  // namespace tessera::cudnn_backend
