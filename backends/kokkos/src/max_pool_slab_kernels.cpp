#include "tessera/backends/kokkos/max_pool_slab_kernels.hpp"

#include <cstring>

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/half_float.hpp"

namespace tessera::kokkos_backend {
namespace {

// Channels are handled in groups of this many so that the compiler keeps a group's running
// maxima in vector registers.
constexpr int64_t kGroup = 8;

/// *value if `keep`, else +0, without a branch: which element of a window is its maximum is
/// data, and a branch on it mispredicted often enough to make the rebuild 2.5x slower (25 ms
/// against 10 per cosmoflow-small step at S=64).
KOKKOS_INLINE_FUNCTION float gradient_if(bool keep, const float* value) {
  uint32_t bits;
  memcpy(&bits, value, sizeof bits);
  bits &= 0u - static_cast<uint32_t>(keep);
  float out;
  memcpy(&out, &bits, sizeof out);
  return out;
}
/// The same for a bf16 or fp16 value (its bit pattern): +0 is the zero pattern in both.
KOKKOS_INLINE_FUNCTION uint16_t gradient_if(bool keep, const uint16_t* value) {
  return static_cast<uint16_t>(*value & (0u - static_cast<uint32_t>(keep)));
}

// The kernels read and write fp32 tensors as floats and bf16/fp16 tensors as their bit
// patterns (Type says which, at compile time: the channel loop stays vectorised); the maxima
// are compared as floats, and a 16-bit maximum is stored back exactly.
template <ElementType Type>
KOKKOS_INLINE_FUNCTION float load(const float* p) {
  return *p;
}
template <ElementType Type>
KOKKOS_INLINE_FUNCTION float load(const uint16_t* p) {
  return Type == ElementType::fp16 ? half_float::from_fp16(*p) : half_float::from_bf16(*p);
}
template <ElementType Type>
KOKKOS_INLINE_FUNCTION void store(float* p, float v) {
  *p = v;
}
template <ElementType Type>
KOKKOS_INLINE_FUNCTION void store(uint16_t* p, float v) {
  *p = Type == ElementType::fp16 ? half_float::to_fp16(v) : half_float::to_bf16(v);
}

template <class T, ElementType Type>
void pool_slab(const T* slab, T* y, uint8_t* argmax, const MaxPoolSlabLayout& s) {
  Kokkos::parallel_for(
      "tessera::conv_max_pool::pool", RangePolicy(0, s.pooled_rows * s.ph), KOKKOS_LAMBDA(const int64_t line) {
        const int64_t pr = line / s.ph, ph = line % s.ph;
        for (int64_t pw = 0; pw < s.pw; ++pw) {
          const int64_t out = s.out_offset + ((pr * s.ph + ph) * s.pw + pw) * s.c;
          for (int64_t c0 = 0; c0 < s.c; c0 += kGroup) {
            const int64_t n = s.c - c0 < kGroup ? s.c - c0 : kGroup;
            float best[kGroup];
            uint8_t at[kGroup];
            for (int64_t j = 0; j < kGroup; ++j) {  // the first window position sets them
              best[j] = 0.0f;
              at[j] = 0;
            }
            uint8_t a = 0;
            for (int64_t dd = 0; dd < s.kd; ++dd)
              for (int64_t hh = 0; hh < s.kh; ++hh) {
                const int64_t in_line = ((pr * s.kd + dd) * s.h + ph * s.kh + hh) * s.w;
                for (int64_t ww = 0; ww < s.kw; ++ww, ++a) {
                  const int64_t in = (in_line + pw * s.kw + ww) * s.c + c0;
                  for (int64_t j = 0; j < n; ++j) {
                    const float v = load<Type>(slab + in + j);
                    const bool larger = v > best[j] || a == 0;
                    best[j] = larger ? v : best[j];
                    at[j] = larger ? a : at[j];
                  }
                }
              }
            for (int64_t j = 0; j < n; ++j) {
              store<Type>(y + out + c0 + j, best[j]);
              argmax[out + c0 + j] = at[j];
            }
          }
        }
      });
}

template <class T>
void unpool_slab(const T* KOKKOS_RESTRICT dy, const uint8_t* KOKKOS_RESTRICT argmax, T* KOKKOS_RESTRICT grad,
                 const MaxPoolSlabLayout& s) {
  // Restrict pointers and the branch-free select keep the channel loop vectorised.
  Kokkos::parallel_for(
      "tessera::conv_max_pool::unpool", RangePolicy(0, s.rows * s.h), KOKKOS_LAMBDA(const int64_t line) {
        const int64_t r = line / s.h, h = line % s.h;
        const int64_t pr = r / s.kd, ph = h / s.kh;
        T* KOKKOS_RESTRICT g = grad + line * s.w * s.c;
        int64_t covered = 0;  // columns [0, covered) belong to some window
        if (pr < s.pooled_rows && ph < s.ph) {
          covered = s.pw * s.kw;
          const int a0 = static_cast<int>(((r % s.kd) * s.kh + h % s.kh) * s.kw);
          const int64_t pooled_line = s.out_offset + (pr * s.ph + ph) * s.pw * s.c;
          for (int64_t pw = 0; pw < s.pw; ++pw) {
            const T* KOKKOS_RESTRICT d = dy + pooled_line + pw * s.c;
            const uint8_t* KOKKOS_RESTRICT at = argmax + pooled_line + pw * s.c;
            for (int64_t ww = 0; ww < s.kw; ++ww) {
              const int a = a0 + static_cast<int>(ww);
              T* KOKKOS_RESTRICT o = g + (pw * s.kw + ww) * s.c;
              for (int64_t c = 0; c < s.c; ++c) o[c] = gradient_if(at[c] == a, d + c);
            }
          }
        }
        for (int64_t i = covered * s.c; i < s.w * s.c; ++i) g[i] = T(0);
      });
}

/// The fp32 or 16-bit storage of `t`, as the kernels take it.
template <class T>
T* storage(const Tensor& t);
template <>
float* storage<float>(const Tensor& t) {
  return t.data();
}
template <>
uint16_t* storage<uint16_t>(const Tensor& t) {
  return t.half_view().data();
}

/// Runs `kernel` on the tensors' storage as float or 16-bit patterns, whose type all of them
/// must share.
template <class Kernel>
void on_storage(const char* what, std::initializer_list<const Tensor*> tensors, Kernel&& kernel) {
  const ElementType type = (*tensors.begin())->type();
  for (const Tensor* t : tensors)
    if (t->type() != type)
      throw Error(std::string(what) + ": tensors of " + element_type_name(type) + " and " +
                  element_type_name(t->type()));
  if (type == ElementType::fp32) return kernel(float{});
  return kernel(uint16_t{});
}

}  // namespace

void max_pool_slab_forward(const Tensor& slab, const Tensor& y, const SlabArgmax& argmax, const MaxPoolSlabLayout& s) {
  on_storage("max_pool_slab_forward", {&slab, &y}, [&](auto element) {
    using T = decltype(element);
    if (slab.type() == ElementType::fp16)
      pool_slab<T, ElementType::fp16>(storage<T>(slab), storage<T>(y), argmax.data(), s);
    else if (slab.type() == ElementType::bf16)
      pool_slab<T, ElementType::bf16>(storage<T>(slab), storage<T>(y), argmax.data(), s);
    else
      pool_slab<T, ElementType::fp32>(storage<T>(slab), storage<T>(y), argmax.data(), s);
  });
}

void max_pool_slab_backward(const Tensor& dy, const SlabArgmax& argmax, const Tensor& grad,
                            const MaxPoolSlabLayout& s) {
  on_storage("max_pool_slab_backward", {&dy, &grad}, [&](auto element) {
    using T = decltype(element);
    unpool_slab<T>(storage<T>(dy), argmax.data(), storage<T>(grad), s);
  });
}

void add_slab_gradient(const Tensor& sum, const Tensor& part) { accumulate(part, sum); }

}  // namespace tessera::kokkos_backend
