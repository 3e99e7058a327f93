#pragma once
// Counter-based random numbers: every value is a pure function of (seed, stream, index).
// A parameter initialised by name, or a dropout mask keyed by (step, layer, element), is
// therefore the same whichever rank or thread computes it and however the work is split.
#include <cstdint>
#include <string>

#include "tessera/core/kokkos_compat.hpp"

namespace tessera::rng {

KOKKOS_INLINE_FUNCTION uint64_t mix(uint64_t z) {
  // splitmix64 finaliser: a bijection with full avalanche.
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

KOKKOS_INLINE_FUNCTION uint64_t bits(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix(mix(seed ^ mix(stream)) + index);
}

/// Uniform in [0, 1) with 24 random bits.
KOKKOS_INLINE_FUNCTION float uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<float>(bits(seed, stream, index) >> 40) * (1.0f / 16777216.0f);
}

/// Standard normal (Box–Muller on two independent draws).
KOKKOS_INLINE_FUNCTION float normal(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t b = bits(seed, stream, index);
  const double u1 = (static_cast<double>(b >> 40) + 1.0) * (1.0 / 16777217.0);  // (0, 1]
  const double u2 = static_cast<double>(b & 0xFFFFFFull) * (1.0 / 16777216.0);
  return static_cast<float>(::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586 * u2));
}

/// A stable 64-bit stream id for a name (FNV-1a), e.g. a parameter's name.
uint64_t stream_of(const std::string& name);

}  // namespace tessera::rng
