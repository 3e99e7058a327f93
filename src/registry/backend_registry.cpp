#include "tessera/registry/backend_registry.hpp"

#include <memory>

#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/build_info.hpp"
#if TESSERA_ENABLE_ONEDNN
#include "tessera/backends/onednn/onednn_backend.hpp"
#endif
#if TESSERA_ENABLE_CUDNN
#include "tessera/backends/cudnn/cudnn_backend.hpp"
#endif
#include "tessera/core/error.hpp"

namespace tessera::registry {
namespace {

struct Registry {
  std::vector<std::unique_ptr<ops::Backend>> backends;  // in order of preference for "auto", Kokkos last
  Registry() {
    // Vendor backends come first: "auto" takes the first that supports a case.
#if TESSERA_ENABLE_CUDNN
    backends.push_back(cudnn_backend::make_backend());
#endif
#if TESSERA_ENABLE_ONEDNN
    backends.push_back(onednn_backend::make_backend());
#endif
    backends.push_back(kokkos_backend::make_backend());
  }
};

Registry& instance() {
  static Registry r;
  return r;
}

}  // namespace

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const auto& b : instance().backends) names.push_back(b->name());
  return names;
}

std::string portable_only_warning(const std::vector<std::string>& backends) {
  for (const auto& name : backends)
    if (name == "onednn" || name == "cudnn") return "";
  // Measured on the quick start's example (examples/hdf5/cosmoflow_tiny.json, 2 cores): 67
  // samples/s on the Kokkos kernels against 368 with oneDNN; larger volumes widen the gap.
  return "this build has no oneDNN (or cuDNN) backend: convolutions run on the portable Kokkos kernels, "
         "about 5x slower on the quick start's example and more on larger volumes; rebuild with "
         "-DTESSERA_ENABLE_ONEDNN=ON (Spack: tessera +onednn)";
}

ops::Backend& backend(const std::string& name) {
  for (const auto& b : instance().backends)
    if (b->name() == name) return *b;
  std::string list;
  for (const auto& n : available_backends()) list += (list.empty() ? "" : ", ") + n;
  throw Error("backend '" + name + "' is not compiled into this build (available: auto, " + list + ")");
}

}  // namespace tessera::registry
