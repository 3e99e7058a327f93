#pragma once
// The oneDNN CPU backend. Ops take plain channels-last tensors (NDHWC activations, ODHWI
// weights); cases oneDNN cannot run on this build (e.g. device memory) return nullptr so the
// registry falls back to Kokkos.
#include <memory>

#include "tessera/ops/backend.hpp"

namespace tessera::onednn_backend {

std::unique_ptr<ops::Backend> make_backend();
/// "oneDNN 2.6.3 (cpu runtime OpenMP, ISA ...)" for `tessera info`.
std::string version_string();

}  // namespace tessera::onednn_backend
