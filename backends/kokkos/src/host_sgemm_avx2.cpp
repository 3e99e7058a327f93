// host_sgemm's kernel for AVX2 with FMA (this file alone is compiled with -mavx2 -mfma:
// backends/kokkos/CMakeLists.txt); called only where the CPU runs both (host_sgemm.cpp).
#if defined(TESSERA_HOST_SGEMM_X86)
#if !defined(__AVX2__) || !defined(__FMA__)
#error "host_sgemm_avx2.cpp is compiled with -mavx2 -mfma"
#endif
#include "host_sgemm_block.hpp"

namespace tessera::kokkos_backend::host_sgemm::variants {
namespace {
typedef float Vector __attribute__((vector_size(32)));
// 16 vector registers: 12 accumulators, two B vectors and a broadcast of A.
using Wide = RegisterBlock<Vector, 6, 2>;
using Narrow = RegisterBlock<Vector, 12, 1>;
}  // namespace

TESSERA_HOST_SGEMM_VARIANT(avx2)

}  // namespace tessera::kokkos_backend::host_sgemm::variants
#endif
