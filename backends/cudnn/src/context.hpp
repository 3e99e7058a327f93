#pragma once
// The process's cuDNN handle, bound to the Kokkos CUDA stream, and the one device workspace
// every cuDNN op of the backend shares. Private to the cuDNN backend.
#include <cudnn.h>

#include <cstddef>
#include <mutex>
#include <string>

#include "tessera/core/kokkos_compat.hpp"

namespace tessera::cudnn_backend {

/// Throws Error unless `status` is success, naming the cuDNN call, the op and its geometry
/// (`what`, e.g. "convolution 3d 4->32 k3 s1 p1 d1 in 4x128x128x128") and cuDNN's reason.
void check(cudnnStatus_t status, const char* call, const std::string& what);

/// One cuDNN handle and one grow-only workspace for the running Kokkos session. Every call
/// goes to the Kokkos default CUDA stream, so cuDNN and Kokkos kernels run in program order
/// without fences, and ops may share the workspace: a call's use of it is over before the
/// next call on the stream starts. Ops hold `lock()` for the length of a call.
class Context {
 public:
  /// The context, created on first use after Kokkos::initialize and released by
  /// Kokkos::finalize (a device View must not outlive Kokkos).
  static Context& get();
  /// The context if one exists, else nullptr; creates nothing.
  static Context* existing();

  Context();  // through get()
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  cudnnHandle_t handle() const { return handle_; }
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }

  /// At least `bytes` bytes of device memory (nullptr for 0), contents undefined. Grows only:
  /// steady-state steps allocate nothing.
  void* workspace(size_t bytes);
  size_t workspace_capacity() const { return workspace_.extent(0); }

  /// Device memory free now; bounds the workspace an algorithm may ask for.
  static size_t free_device_bytes();

 private:
  cudnnHandle_t handle_ = nullptr;
  std::mutex mutex_;
  Kokkos::View<unsigned char*, Kokkos::CudaSpace> workspace_;
};

}  // namespace tessera::cudnn_backend
