#include "tessera/backends/kokkos/host_sgemm.hpp"

#include <algorithm>

#include "host_sgemm_variants.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend::host_sgemm {

std::string name(Isa isa) {
  switch (isa) {
    case Isa::build: return "build";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "unknown";
}

std::vector<Isa> runnable() {
  std::vector<Isa> isas{Isa::build};
#if defined(TESSERA_HOST_SGEMM_X86)
  // __builtin_cpu_supports also asks whether the OS saves the wide registers.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isas.push_back(Isa::avx2);
  if (__builtin_cpu_supports("avx512f")) isas.push_back(Isa::avx512);
#endif
  return isas;
}

Isa widest() {
  static const Isa isa = runnable().back();
  return isa;
}

namespace {

variants::Shape shape_of(Isa isa, bool wide) {
  switch (isa) {
    case Isa::build: return variants::shape_build(wide);
#if defined(TESSERA_HOST_SGEMM_X86)
    case Isa::avx2: return variants::shape_avx2(wide);
    case Isa::avx512: return variants::shape_avx512(wide);
#else
    default: break;
#endif
  }
  throw Error("host_sgemm: this build has no " + name(isa) + " kernel");
}

}  // namespace

Kernel choose(Isa isa, int64_t n) {
  static const std::vector<Isa> cpu = runnable();
  if (std::find(cpu.begin(), cpu.end(), isa) == cpu.end())
    throw Error("host_sgemm: this CPU (or this build) does not run the " + name(isa) + " kernel");
  // A B no wider than one vector would leave half of a two-vector block's columns empty.
  const variants::Shape narrow = shape_of(isa, false);
  const variants::Shape s = n <= narrow.nr ? narrow : shape_of(isa, true);
  return {isa, s.mr, s.nr};
}

int64_t packed_b_size(const Kernel& kernel, int64_t k, int64_t n) {
  return k * ((n + kernel.nr - 1) / kernel.nr) * kernel.nr;
}

void pack_b(const Kernel& kernel, int64_t k, int64_t n, const float* b, int64_t row_stride, int64_t col_stride,
            float* panels) {
  const int64_t nr = kernel.nr, count = (n + nr - 1) / nr;
  for (int64_t j = 0; j < count; ++j) {
    const int64_t j0 = j * nr, width = n - j0 < nr ? n - j0 : nr;
    float* panel = panels + j * k * nr;
    for (int64_t p = 0; p < k; ++p) {
      const float* row = b + p * row_stride + j0 * col_stride;
      float* out = panel + p * nr;
      int64_t c = 0;
      if (col_stride == 1)
        for (; c < width; ++c) out[c] = row[c];
      else
        for (; c < width; ++c) out[c] = row[c * col_stride];
      for (; c < nr; ++c) out[c] = 0.0f;
    }
  }
}

namespace {

/// A variant's entry point for products Q; a non-deduced context, so that a variant this build
/// lacks can be passed as nullptr.
template <class Q>
struct Entry {
  using type = void (*)(const Q&, bool);
};

/// Runs `q` on the kernel's instruction set: build(q, wide), avx2(q, wide) or avx512(q, wide).
template <class Q>
void run(const Kernel& kernel, const Q& q, typename Entry<Q>::type build, typename Entry<Q>::type avx2,
         typename Entry<Q>::type avx512) {
  const bool wide = kernel.nr != shape_of(kernel.isa, false).nr;
  switch (kernel.isa) {
    case Isa::build: return build(q, wide);
    case Isa::avx2:
      if (avx2 != nullptr) return avx2(q, wide);
      break;
    case Isa::avx512:
      if (avx512 != nullptr) return avx512(q, wide);
      break;
  }
  throw Error("host_sgemm: this build has no " + name(kernel.isa) + " kernel");
}

#if defined(TESSERA_HOST_SGEMM_X86)
#define TESSERA_HOST_SGEMM_VARIANTS(f) variants::f##_build, variants::f##_avx2, variants::f##_avx512
#else
#define TESSERA_HOST_SGEMM_VARIANTS(f) variants::f##_build, nullptr, nullptr
#endif

}  // namespace

void multiply(const Kernel& kernel, int64_t m, int64_t n, int64_t k, const float* a, int64_t a_row_stride,
              int64_t a_col_stride, const float* panels, float* c, int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  run(kernel, variants::Product{m, n, k, a, a_row_stride, a_col_stride, panels, c, ldc, accumulate},
      TESSERA_HOST_SGEMM_VARIANTS(multiply));
}

void multiply_gathered(const Kernel& kernel, int64_t m, int64_t n, const float* const* rows,
                       const Segment* segments, int64_t segment_count, const float* panels, int64_t k, float* c,
                       int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  run(kernel, variants::GatheredProduct{m, n, k, rows, segments, segment_count, panels, c, ldc, accumulate},
      TESSERA_HOST_SGEMM_VARIANTS(multiply_gathered));
}

void multiply_gathered_b(const Kernel& kernel, int64_t m, int64_t n, int64_t k, const float* a, int64_t a_col_stride,
                         const float* const* b_rows, int64_t b_offset, float* c, int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  run(kernel, variants::GatheredBProduct{m, n, k, a, a_col_stride, b_rows, b_offset, c, ldc, accumulate},
      TESSERA_HOST_SGEMM_VARIANTS(multiply_gathered_b));
}

#undef TESSERA_HOST_SGEMM_VARIANTS

}  // namespace tessera::kokkos_backend::host_sgemm
