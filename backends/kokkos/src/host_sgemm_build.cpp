// host_sgemm's kernel for the build's own target (SSE2 on a generic x86-64 build, NEON on
// aarch64, or what TESSERA_HOST_ARCH names): the one every CPU the build runs on can run.
#include "host_sgemm_block.hpp"

namespace tessera::kokkos_backend::host_sgemm::variants {
namespace {
#if defined(__AVX512F__)
typedef float Vector __attribute__((vector_size(64)));
using Wide = RegisterBlock<Vector, 8, 2>;
using Narrow = RegisterBlock<Vector, 16, 1>;
#elif defined(__AVX__)
typedef float Vector __attribute__((vector_size(32)));
using Wide = RegisterBlock<Vector, 6, 2>;
using Narrow = RegisterBlock<Vector, 12, 1>;
#else
// 128-bit vectors (SSE2, NEON), 16 or more registers.
typedef float Vector __attribute__((vector_size(16)));
using Wide = RegisterBlock<Vector, 6, 2>;
using Narrow = RegisterBlock<Vector, 12, 1>;
#endif
}  // namespace

TESSERA_HOST_SGEMM_VARIANT(build)

}  // namespace tessera::kokkos_backend::host_sgemm::variants
