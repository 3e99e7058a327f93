#include "tessera/backends/kokkos/max_pool_gather_kernels.hpp"

#include "tessera/core/half_float.hpp"
#include "tessera/core/kokkos_compat.hpp"

namespace tessera::kokkos_backend {
namespace {

KOKKOS_INLINE_FUNCTION float load(const float* p, ElementType) { return *p; }
KOKKOS_INLINE_FUNCTION float load(const uint16_t* p, ElementType type) { return half_float::from_half(*p, type); }
KOKKOS_INLINE_FUNCTION void store(float* p, float v, ElementType) { *p = v; }
KOKKOS_INLINE_FUNCTION void store(uint16_t* p, float v, ElementType type) { *p = half_float::to_half(v, type); }

/// The extents the kernel reads (2D as depth 1).
struct Extents {
  int64_t n, c, in[3], out[3], k[3], s[3], p[3];
};

Extents extents_of(const ops::PoolGeometry& g) {
  Extents e{g.batch, g.channels, {}, {}, {}, {}, {}};
  const auto out = g.out_size();
  for (int a = 0; a < 3; ++a) {
    e.in[a] = g.in_size[static_cast<size_t>(a)];
    e.out[a] = out[static_cast<size_t>(a)];
    e.k[a] = g.kernel[static_cast<size_t>(a)];
    e.s[a] = g.stride[static_cast<size_t>(a)];
    e.p[a] = g.padding[static_cast<size_t>(a)];
  }
  return e;
}

/// The first and last output index along one axis whose window covers input index i.
KOKKOS_INLINE_FUNCTION void covering(int64_t i, int64_t k, int64_t s, int64_t p, int64_t out, int64_t& first,
                                     int64_t& last) {
  const int64_t lo = i + p - k + 1;  // the window starting at o·s − p covers i when o·s − p ≤ i < o·s − p + k
  first = lo <= 0 ? 0 : (lo + s - 1) / s;
  last = (i + p) / s;
  if (last > out - 1) last = out - 1;
}

/// Whether position `at` holds the first value equal to `m` in the window at `origin`, scanned
/// in depth, height, width order over its in-bounds positions. `x` points at the sample's
/// channel c.
template <class T>
KOKKOS_INLINE_FUNCTION bool first_maximum(const Extents& e, const T* x, const int64_t origin[3], const int64_t at[3],
                                          float m, ElementType type) {
  for (int64_t a = origin[0] < 0 ? 0 : origin[0]; a <= at[0]; ++a)
    for (int64_t b = origin[1] < 0 ? 0 : origin[1]; b < origin[1] + e.k[1] && b < e.in[1]; ++b)
      for (int64_t q = origin[2] < 0 ? 0 : origin[2]; q < origin[2] + e.k[2] && q < e.in[2]; ++q) {
        if (a == at[0] && b == at[1] && q == at[2]) return true;
        if (load(x + ((a * e.in[1] + b) * e.in[2] + q) * e.c, type) == m) return false;
      }
  return true;
}

template <class T>
void gather(const Extents e, const T* x, const T* y, const T* dy, T* dx, ElementType type) {
  const int64_t total = e.n * e.in[0] * e.in[1] * e.in[2] * e.c;
  Kokkos::parallel_for(
      "tessera::max_pool_backward_gather", RangePolicy(0, total), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t c = i % e.c;
        int64_t rest = i / e.c;
        const int64_t w = rest % e.in[2];
        rest /= e.in[2];
        const int64_t h = rest % e.in[1];
        rest /= e.in[1];
        const int64_t d = rest % e.in[0];
        const int64_t n = rest / e.in[0];
        const float v = load(x + i, type);
        int64_t od0, od1, oh0, oh1, ow0, ow1;
        covering(d, e.k[0], e.s[0], e.p[0], e.out[0], od0, od1);
        covering(h, e.k[1], e.s[1], e.p[1], e.out[1], oh0, oh1);
        covering(w, e.k[2], e.s[2], e.p[2], e.out[2], ow0, ow1);
        float g = 0.0f;
        for (int64_t od = od0; od <= od1; ++od)
          for (int64_t oh = oh0; oh <= oh1; ++oh)
            for (int64_t ow = ow0; ow <= ow1; ++ow) {
              const int64_t o = (((n * e.out[0] + od) * e.out[1] + oh) * e.out[2] + ow) * e.c + c;
              const float m = load(y + o, type);
              if (!(v == m)) continue;
              const int64_t origin[3] = {od * e.s[0] - e.p[0], oh * e.s[1] - e.p[1], ow * e.s[2] - e.p[2]};
              const int64_t at[3] = {d, h, w};
              const bool first = first_maximum(e, x + n * e.in[0] * e.in[1] * e.in[2] * e.c + c, origin, at, m, type);
              if (first) g += load(dy + o, type);
            }
        store(dx + i, g, type);
      });
}

}  // namespace

void max_pool_backward_gather(const ops::PoolGeometry& g, const Tensor& x, const Tensor& y, const Tensor& dy,
                       const Tensor& dx) {
  const Extents e = extents_of(g);
  if (g.type == ElementType::fp32)
    gather(e, x.data(), y.data(), dy.data(), dx.data(), g.type);
  else
    gather(e, x.half_view().data(), y.half_view().data(), dy.half_view().data(), dx.half_view().data(), g.type);
}

}  // namespace tessera::kokkos_backend
