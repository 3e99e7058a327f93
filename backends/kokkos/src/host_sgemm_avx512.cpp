// host_sgemm's kernel for AVX-512 (this file alone is compiled with -mavx512f -mfma:
// backends/kokkos/CMakeLists.txt); called only where the CPU runs AVX-512 (host_sgemm.cpp).
#if defined(TESSERA_HOST_SGEMM_X86)
#if !defined(__AVX512F__) || !defined(__FMA__)
#error "host_sgemm_avx512.cpp is compiled with -mavx512f -mfma"
#endif
#include "host_sgemm_block.hpp"

namespace tessera::kokkos_backend::host_sgemm::variants {
namespace {
typedef float Vector __attribute__((vector_size(64)));
// 32 vector registers: 16 accumulators a block, so two FMA pipes of four cycles' latency have
// eight independent sums each; a one-vector B gets 16 rows.
using Wide = RegisterBlock<Vector, 8, 2>;
using Narrow = RegisterBlock<Vector, 16, 1>;
}  // namespace

TESSERA_HOST_SGEMM_VARIANT(avx512)

}  // namespace tessera::kokkos_backend::host_sgemm::variants
#endif
