#include "blas_threads.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace tessera::kokkos_backend {

void keep_blas_on_calling_thread() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) return;
    // Looked up, not linked: the BLAS is whatever Kokkos Kernels was built against.
    using SetThreads = void (*)(int);
    if (auto set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
      set_threads(1);
  });
}

}  // namespace tessera::kokkos_backend
