#pragma once
// The one place that papers over Kokkos 3.4 vs 4.x API differences, so the rest of the
// code compiles against both.
#include <Kokkos_Core.hpp>

#include <cmath>

namespace tessera {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostSpace = Kokkos::HostSpace;
/// Whether host code may read tensor memory directly (CPU builds) or must stage it (GPU builds).
inline constexpr bool kHostAccessible = Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible;

/// Flat device buffer: every Tensor's storage.
template <class T>
using DeviceView = Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>;
template <class T>
using UnmanagedDeviceView =
    Kokkos::View<T*, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;
template <class T>
using UnmanagedMatrix =
    Kokkos::View<T**, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <int N>
using MDPolicy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<N>>;
using RangePolicy = Kokkos::RangePolicy<ExecSpace>;

namespace math {
// Kokkos 3.4 has Kokkos::Experimental::exp etc.; 4.x has Kokkos::exp. The std versions are
// device-callable in every backend we build (CUDA provides them as __device__ overloads).
KOKKOS_INLINE_FUNCTION float exp(float x) { return ::expf(x); }
KOKKOS_INLINE_FUNCTION double exp(double x) { return ::exp(x); }
KOKKOS_INLINE_FUNCTION float log(float x) { return ::logf(x); }
KOKKOS_INLINE_FUNCTION double log(double x) { return ::log(x); }
KOKKOS_INLINE_FUNCTION float log1p(float x) { return ::log1pf(x); }
KOKKOS_INLINE_FUNCTION double log1p(double x) { return ::log1p(x); }
KOKKOS_INLINE_FUNCTION float sqrt(float x) { return ::sqrtf(x); }
KOKKOS_INLINE_FUNCTION double sqrt(double x) { return ::sqrt(x); }
KOKKOS_INLINE_FUNCTION float cos(float x) { return ::cosf(x); }
KOKKOS_INLINE_FUNCTION double cos(double x) { return ::cos(x); }
KOKKOS_INLINE_FUNCTION float abs(float x) { return ::fabsf(x); }
KOKKOS_INLINE_FUNCTION double abs(double x) { return ::fabs(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T max(T a, T b) { return a > b ? a : b; }
template <class T>
KOKKOS_INLINE_FUNCTION T min(T a, T b) { return a < b ? a : b; }
}  // namespace math

}  // namespace tessera
