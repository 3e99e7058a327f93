#pragma once
// Conversions between float and the 16-bit formats, as bit patterns, callable from Kokkos
// kernels on every backend. Kokkos 3.4 has no bfloat16 type and its half_t exists only for
// CUDA, so tensors hold 16-bit values as uint16_t and kernels convert at load and store,
// computing in fp32 (what oneDNN and cuDNN do inside their reduced-precision kernels too).
// Both directions round to nearest, ties to even; NaN stays NaN, overflow becomes infinity.
#include <cstdint>
#include <cstring>

#include "tessera/core/element_type.hpp"
#include "tessera/core/kokkos_compat.hpp"

namespace tessera::half_float {

KOKKOS_INLINE_FUNCTION uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

KOKKOS_INLINE_FUNCTION float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/// Round to nearest even; a NaN stays a (quiet) NaN. Both results are formed and one chosen,
/// with no branch, so that loops converting whole tensors vectorise.
KOKKOS_INLINE_FUNCTION uint16_t to_bf16(float f) {
  const uint32_t u = bits_of(f);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x40u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

KOKKOS_INLINE_FUNCTION float from_bf16(uint16_t h) { return float_of(static_cast<uint32_t>(h) << 16); }

KOKKOS_INLINE_FUNCTION uint16_t to_fp16(float f) {
  const uint32_t u = bits_of(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (a >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65536 (and inf)
  if (a < 0x38800000u) {  // below fp16's smallest normal, 2^-14: a subnormal or zero
    if (a < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    const uint32_t exponent = a >> 23;
    const uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;  // value = mantissa·2^(exponent-150), unit 2^-24
    uint32_t h = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (a >> 13) - (112u << 10);  // rebias the exponent from 127 to 15
  const uint32_t rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry may reach infinity: right
  return static_cast<uint16_t>(sign | h);
}

KOKKOS_INLINE_FUNCTION float from_fp16(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {
    if (mantissa == 0) return float_of(sign);
    exponent = 113;  // normalise the subnormal
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      --exponent;
    }
    return float_of(sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13));
  }
  if (exponent == 31) return float_of(sign | 0x7f800000u | (mantissa << 13));
  return float_of(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// `f` stored in the 16-bit `type` (bf16 or fp16).
KOKKOS_INLINE_FUNCTION uint16_t to_half(float f, ElementType type) {
  return type == ElementType::bf16 ? to_bf16(f) : to_fp16(f);
}
KOKKOS_INLINE_FUNCTION float from_half(uint16_t h, ElementType type) {
  return type == ElementType::bf16 ? from_bf16(h) : from_fp16(h);
}
/// `f` rounded to `type` and back: what storing it in a tensor of that type keeps.
KOKKOS_INLINE_FUNCTION float rounded(float f, ElementType type) {
  return type == ElementType::fp32 ? f : from_half(to_half(f, type), type);
}

}  // namespace tessera::half_float
