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

/// f(i) for i in [0, n).
template <class F>
void for_each_index(const std::string& label, int64_t n, const F& f) {
  if constexpr (kOnHost) {
    const int64_t block = kHostBlockElements;
    Kokkos::parallel_for(
        label, RangePolicy(0, (n + block - 1) / block), KOKKOS_LAMBDA(const int64_t b) {
          const F body = f;
          const int64_t end = math::min(n, (b + 1) * block);
          TESSERA_SIMD
          for (int64_t i = b * block; i < end; ++i) body(i);
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
          const F body = f;
          const int64_t end = math::min(rows, (b + 1) * block);
          for (int64_t r = b * block; r < end; ++r) {
            const int64_t first = r * channels;
            TESSERA_SIMD
            for (int64_t c = 0; c < channels; ++c) body(first + c, c);
          }
        });
  } else {
    Kokkos::parallel_for(
        label, RangePolicy(0, rows * channels), KOKKOS_LAMBDA(const int64_t i) { f(i, i % channels); });
  }
}

}  // namespace tessera::kokkos_backend
