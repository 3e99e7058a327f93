#pragma once
// The oneDNN CPU backend. Ops take plain channels-last tensors (NDHWC activations, ODHWI
// weights); cases oneDNN cannot run on this build (e.g. device memory) return nullptr so the
// registry falls back to Kokkos.
#include <cstdint>
#include <memory>

#include "tessera/ops/backend.hpp"

namespace tessera::onednn_backend {

std::unique_ptr<ops::Backend> make_backend();
/// The backend's activation op, run over pieces of at most `max_piece` elements. The backend
/// uses pieces as large as oneDNN's 32-bit indexing allows; tests use small ones.
std::unique_ptr<ops::EltwiseOp> make_eltwise_in_pieces(const ops::EltwiseDesc& d, int64_t max_piece);
/// "oneDNN 2.6.3 (cpu runtime OpenMP, ISA ...)" for `tessera info`.
std::string version_string();
/// The instruction set oneDNN dispatches its kernels for on this CPU, as oneDNN reports it
/// (dnnl::get_effective_cpu_isa): "avx2", "avx512_core", "avx512_core_bf16", "avx512_core_amx"...
std::string dispatched_isa();
/// Whether that ISA has bf16 instructions (AVX512-BF16 or AMX), which oneDNN's bf16 kernels
/// need to run faster than fp32 (without them oneDNN emulates bf16, slower than fp32).
bool has_bf16_instructions();

}  // namespace tessera::onednn_backend
