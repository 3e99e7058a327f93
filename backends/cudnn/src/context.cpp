#include "context.hpp"

#include <cuda_runtime_api.h>

#include <memory>

#include "tessera/core/error.hpp"

namespace tessera::cudnn_backend {
namespace {

std::mutex& creation_mutex() {
  static std::mutex m;
  return m;
}

std::unique_ptr<Context>& instance() {
  static std::unique_ptr<Context> context;
  return context;
}

}  // namespace

void check(cudnnStatus_t status, const char* call, const std::string& what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  // cuDNN 9 keeps a sentence on the last failure (often which parameter it rejected).
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof detail);
  std::string message = "cudnn " + what + ": " + call + " failed with " + cudnnGetErrorString(status);
  if (detail[0] != '\0') message += " (" + std::string(detail) + ")";
  throw Error(message);
}

Context& Context::get() {
  std::lock_guard<std::mutex> guard(creation_mutex());
  auto& context = instance();
  if (!context) {
    if (!Kokkos::is_initialized())
      throw Error("cudnn backend: used before Kokkos::initialize (or after Kokkos::finalize)");
    context = std::make_unique<Context>();
    // Hooks run before Kokkos tears down its memory spaces; a later initialize starts afresh.
    Kokkos::push_finalize_hook([] {
      std::lock_guard<std::mutex> g(creation_mutex());
      instance().reset();
    });
  }
  return *context;
}

Context* Context::existing() {
  std::lock_guard<std::mutex> guard(creation_mutex());
  return instance().get();
}

Context::Context() {
  check(cudnnCreate(&handle_), "cudnnCreate", "backend start-up");
  const cudnnStatus_t bound = cudnnSetStream(handle_, Kokkos::Cuda().cuda_stream());
  if (bound != CUDNN_STATUS_SUCCESS) {
    cudnnDestroy(handle_);
    check(bound, "cudnnSetStream (the Kokkos CUDA stream)", "backend start-up");
  }
}

Context::~Context() {
  // Work queued on the stream may still read the workspace or use the handle.
  Kokkos::fence();
  workspace_ = Kokkos::View<unsigned char*, Kokkos::CudaSpace>();
  cudnnDestroy(handle_);
}

void* Context::workspace(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (bytes > workspace_.extent(0)) {
    // Calls queued earlier may still use the old buffer; free it first so that peak memory
    // never holds both.
    Kokkos::fence();
    workspace_ = Kokkos::View<unsigned char*, Kokkos::CudaSpace>();
    constexpr size_t granule = size_t(1) << 20;  // round up, so near sizes share one growth
    workspace_ = Kokkos::View<unsigned char*, Kokkos::CudaSpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::cudnn_workspace"),
        (bytes + granule - 1) / granule * granule);
  }
  return workspace_.data();
}

size_t Context::free_device_bytes() {
  size_t free = 0, total = 0;
  const cudaError_t e = cudaMemGetInfo(&free, &total);
  if (e != cudaSuccess)
    throw Error(std::string("cudnn backend: cudaMemGetInfo failed with ") + cudaGetErrorString(e));
  return free;
}

}  // namespace tessera::cudnn_backend
