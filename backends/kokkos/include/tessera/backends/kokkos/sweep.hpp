#pragma once
// The two loop shapes of Tessera's bandwidth-bound kernels, written once for the host and for
// a GPU: a sweep over a flat range (element-wise maps) and over the elements of a
// channels-last [rows, channels] matrix (per-channel maps). On the host a work item takes a
// contiguous block and runs an inner loop the compiler vectorises (TESSERA_SIMD: the body
// must not depend on another element, so the loop carries no dependence to check); on a GPU
// adjacent threads take adjacent elements, so that their loads coalesce.
#include <algorithm>
#include <cstdint>
#include <string>

#include "tessera/core/kokkos_compat.hpp"

namespace tessera::kokkos_backend {

/// Whether the kernels run where the host's memory is (Serial and OpenMP builds).
inline constexpr bool kOnHost = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

// An inner loop whose iterations are independent: vectorise it without alias checks. Not for
// device code, where the loop is a thread's own.
//
// The host sweeps run a local copy of the body: the copy's captures (scalars such as a
// kernel's 1/count, and the pointers) become registers, where through the closure they are
// memory that a float store in the loop might alias, so the compiler reloaded them on every
// element and left the loop scalar (measured: a batch-norm backward with ReLU fused ran 10×
// slower until the copy).
#if defined(__CUDA_ARCH__) || !defined(_OPENMP)
#define TESSERA_SIMD
#else
#define TESSERA_SIMD _Pragma("omp simd")
#endif

/// Elements per host work item: 64 KiB of fp32, enough to amortise a work item's start while
/// leaving each thread many items (and so a balanced share).
inline constexpr int64_t kHostBlockElements = 16384;

// A host sweep's inner loop is compiled for each x86-64 vector width and the widest the CPU
// runs is chosen when the program loads (GCC/Clang function multi-versioning), so that one
// binary, built for the generic x86-64 target, runs its element-wise loops in AVX-512 where
// there is AVX-512: bf16's widening, rounding and narrowing took some twenty SSE2
// instructions per four values and held bf16 activations to a quarter of the triad, where a
// native build reached it (docs/benchmarks.md). The backend compiles with -ffp-contract=off,
// so every version computes the same bits. Not under nvcc, and not where the build already
// targets something of its own (TESSERA_HOST_ARCH).
// Not with clang: up to at least clang 14 it refuses target_clones on function templates, and
// these are templates (the fuzz and sanitizer builds use clang; they get the build's target).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && \
    !defined(__NVCOMPILER) && !defined(__AVX__) && !defined(TESSERA_NO_HOST_CLONES)
#define TESSERA_HOST_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx512f", "arch=x86-64-v3", "default")))
#else
#define TESSERA_HOST_CLONES
#endif

namespace sweep_detail {

/// body(i) for i in [begin, end), on a local copy of the body.
template <class F>
TESSERA_HOST_CLONES void host_range(const F& f, int64_t begin, int64_t end) {
  const F body = f;
  TESSERA_SIMD
  for (int64_t i = begin; i < end; ++i) body(i);
}

/// body(r·channels + c, c) for the rows [begin, end) of a [rows, channels] matrix.
template <class F>
TESSERA_HOST_CLONES void host_rows(const F& f, int64_t begin, int64_t end, int64_t channels) {
  const F body = f;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t first = r * channels;
    TESSERA_SIMD
    for (int64_t c = 0; c < channels; ++c) body(first + c, c);
  }
}

}  // namespace sweep_detail

/// f(i) for i in [0, n).
template <class F>
void for_each_index(const std::string& label, int64_t n, const F& f) {
  if constexpr (kOnHost) {
    const int64_t block = kHostBlockElements;
    Kokkos::parallel_for(
        label, RangePolicy(0, (n + block - 1) / block), KOKKOS_LAMBDA(const int64_t b) {
          sweep_detail::host_range(f, b * block, math::min(n, (b + 1) * block));
        });
  } else {
    Kokkos::parallel_for(label, RangePolicy(0, n), KOKKOS_LAMBDA(const int64_t i) { f(i); });
  }
}

/// f(i, c) for every element of a [rows, channels] matrix: row r, channel c, index
/// i = r·channels + c. On the host a work item runs along whole rows (channel c of a row next
/// to c + 1); on a device one thread per element.
template <class F>
void for_each_element(const std::string& label, int64_t rows, int64_t channels, const F& f) {
  if constexpr (kOnHost) {
    const int64_t block = std::max<int64_t>(1, kHostBlockElements / std::max<int64_t>(1, channels));
    Kokkos::parallel_for(
        label, RangePolicy(0, (rows + block - 1) / block), KOKKOS_LAMBDA(const int64_t b) {
          sweep_detail::host_rows(f, b * block, math::min(rows, (b + 1) * block), channels);
        });
  } else {
    Kokkos::parallel_for(
        label, RangePolicy(0, rows * channels), KOKKOS_LAMBDA(const int64_t i) { f(i, i % channels); });
  }
}

}  // namespace tessera::kokkos_backend
