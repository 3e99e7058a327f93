#pragma once
// The element types a tensor stores, as compile-time parameters: a kernel instantiated per
// storage type widens and narrows without a per-element choice of type, so its loop vectorises.
#include <cstdint>

#include "tessera/core/half_float.hpp"
#include "tessera/core/kokkos_compat.hpp"
#include "tessera/core/tensor.hpp"

namespace tessera::kokkos_backend {

struct F32 {
  using Bits = float;
  KOKKOS_INLINE_FUNCTION static float widen(float v) { return v; }
  KOKKOS_INLINE_FUNCTION static float narrow(float v) { return v; }
  static Bits* data(const Tensor& t) { return t.data(); }
};
struct Bf16 {
  using Bits = uint16_t;
  KOKKOS_INLINE_FUNCTION static float widen(uint16_t h) { return half_float::from_bf16(h); }
  KOKKOS_INLINE_FUNCTION static uint16_t narrow(float f) { return half_float::to_bf16(f); }
  static Bits* data(const Tensor& t) { return t.half_view().data(); }
};
struct Fp16 {
  using Bits = uint16_t;
  KOKKOS_INLINE_FUNCTION static float widen(uint16_t h) { return half_float::from_fp16(h); }
  KOKKOS_INLINE_FUNCTION static uint16_t narrow(float f) { return half_float::to_fp16(f); }
  static Bits* data(const Tensor& t) { return t.half_view().data(); }
};

/// f(S{}) for the storage type S of `type`.
template <class F>
void with_storage(ElementType type, F&& f) {
  if (type == ElementType::fp32)
    f(F32{});
  else if (type == ElementType::bf16)
    f(Bf16{});
  else
    f(Fp16{});
}

}  // namespace tessera::kokkos_backend
