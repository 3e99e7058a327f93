#pragma once
// The process's one oneDNN CPU engine and stream, the scratch memory every primitive shares,
// and the binding of tensor pointers to primitive arguments. Private to the oneDNN backend.
#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/kokkos_compat.hpp"

namespace tessera::onednn_backend {

/// Host memory that only ever grows, so that steady-state calls allocate nothing. Plain heap
/// memory rather than a Kokkos View: the process-wide buffers outlive Kokkos::finalize.
class GrowOnlyBuffer {
 public:
  /// At least `bytes` bytes, aligned for any vector load; contents undefined after a growth.
  void* get(size_t bytes);
  size_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> storage_;
  size_t capacity_ = 0;
};

/// One engine and stream for the process, plus two shared grow-only buffers: the scratchpad
/// of whichever primitive runs (every primitive is created with a user scratchpad) and a
/// staging area for weights reordered within one call. Ops take `lock()` for the length of
/// a call, since both buffers are shared by all of them.
class Engine {
 public:
  static Engine& get();

  const dnnl::engine& engine() const { return engine_; }
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }
  /// The OpenMP thread count oneDNN would use now: primitives are built for one count and
  /// rebuilt when it changes.
  static int threads();

  GrowOnlyBuffer& scratchpad() { return scratchpad_; }
  GrowOnlyBuffer& staging() { return staging_; }

  /// Runs `p` on the process stream once Kokkos has finished producing its inputs (a no-op
  /// for OpenMP, kept as the contract), and waits for it. Takes the C argument list so that
  /// a call allocates nothing (the C++ overload builds a vector each time).
  void execute(const dnnl::primitive& p, const std::vector<dnnl_exec_arg_t>& args);

 private:
  Engine();
  std::mutex mutex_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  GrowOnlyBuffer scratchpad_;
  GrowOnlyBuffer staging_;
};

/// Attributes every primitive of the backend is created with: user-managed scratchpad.
dnnl::primitive_attr user_scratchpad_attr();

/// A primitive ready to run: its arguments are memory objects created once without data, to
/// which each call binds the tensors' pointers (no copies, no allocation).
struct BoundPrimitive {
  dnnl::primitive primitive;
  size_t scratchpad_bytes = 0;
  std::vector<std::pair<int, dnnl::memory>> memories;
  std::vector<dnnl_exec_arg_t> args;  // the same memories as oneDNN's C API takes them
  int threads = -1;                   // the OpenMP thread count it was built for; -1 while not built

  bool built() const { return threads >= 0; }
  /// Records `pd`'s primitive and scratchpad and one unbound memory per (argument, desc).
  template <class PrimitiveDesc, class Primitive>
  void build(const PrimitiveDesc& pd, std::vector<std::pair<int, dnnl::memory::desc>> arguments) {
    primitive = Primitive(pd);
    const dnnl::memory::desc scratchpad = pd.scratchpad_desc();
    scratchpad_bytes = scratchpad.get_size();
    if (scratchpad_bytes > 0) arguments.emplace_back(DNNL_ARG_SCRATCHPAD, scratchpad);
    memories.clear();
    args.clear();
    for (auto& [arg, md] : arguments) {
      memories.emplace_back(arg, dnnl::memory(md, Engine::get().engine(), DNNL_MEMORY_NONE));
      args.push_back({arg, memories.back().second.get()});
    }
    threads = Engine::threads();
  }
  /// Binds `data` to argument `arg` (which the primitive must have been built with).
  void bind(int arg, const void* data) {
    for (auto& [a, m] : memories)
      if (a == arg) return m.set_data_handle(const_cast<void*>(data));
    throw std::logic_error("onednn: binding argument " + std::to_string(arg) + " the primitive was not built with");
  }
  /// Binds the shared scratchpad and runs; the caller holds Engine::lock().
  void run() {
    Engine& e = Engine::get();
    if (scratchpad_bytes > 0) bind(DNNL_ARG_SCRATCHPAD, e.scratchpad().get(scratchpad_bytes));
    e.execute(primitive, args);
  }
};

/// True when oneDNN would run this primitive with its reference (naive loop) implementation.
bool is_reference(const dnnl::primitive_desc_base& pd);

}  // namespace tessera::onednn_backend
