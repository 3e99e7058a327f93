#include "engine.hpp"

#include <cstring>
#include <new>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace tessera::onednn_backend {

void* GrowOnlyBuffer::get(size_t bytes) {
  if (bytes <= capacity_) return storage_.get();
  constexpr size_t alignment = 4096;  // a page: what oneDNN's own allocations use for large buffers
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  storage_.reset();  // free first, so peak memory never holds both
  capacity_ = 0;
  void* p = std::aligned_alloc(alignment, rounded);
  if (!p) throw std::bad_alloc();
  storage_.reset(p);
  capacity_ = rounded;
  return p;
}

Engine::Engine() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

Engine& Engine::get() {
  static Engine e;
  return e;
}

int Engine::threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void Engine::execute(const dnnl::primitive& p, const std::vector<dnnl_exec_arg_t>& args) {
  Kokkos::fence();
  dnnl::error::wrap_c_api(dnnl_primitive_execute(p.get(), stream_.get(), static_cast<int>(args.size()), args.data()),
                          "could not execute a primitive");
  stream_.wait();
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool is_reference(const dnnl::primitive_desc_base& pd) { return std::strncmp(pd.impl_info_str(), "ref", 3) == 0; }

}  // namespace tessera::onednn_backend
