#include "tessera/backends/kokkos/max_pool_slab_kernels.hpp"

#include <cstring>

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

}  // namespace

void max_pool_slab_forward(const DeviceView<float>& slab, const DeviceView<float>& y, const SlabArgmax& argmax,
                           const MaxPoolSlabLayout& s) {
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
                    const float v = slab(in + j);
                    const bool larger = v > best[j] || a == 0;
                    best[j] = larger ? v : best[j];
                    at[j] = larger ? a : at[j];
                  }
                }
              }
            for (int64_t j = 0; j < n; ++j) {
              y(out + c0 + j) = best[j];
              argmax(out + c0 + j) = at[j];
            }
          }
        }
      });
}

void max_pool_slab_backward(const DeviceView<float>& dy_view, const SlabArgmax& argmax_view,
                            const DeviceView<float>& grad_view, const MaxPoolSlabLayout& s) {
  // Restrict pointers and the branch-free select keep the channel loop vectorised.
  const float* KOKKOS_RESTRICT dy = dy_view.data();
  const uint8_t* KOKKOS_RESTRICT argmax = argmax_view.data();
  float* KOKKOS_RESTRICT grad = grad_view.data();
  Kokkos::parallel_for(
      "tessera::conv_max_pool::unpool", RangePolicy(0, s.rows * s.h), KOKKOS_LAMBDA(const int64_t line) {
        const int64_t r = line / s.h, h = line % s.h;
        const int64_t pr = r / s.kd, ph = h / s.kh;
        float* KOKKOS_RESTRICT g = grad + line * s.w * s.c;
        int64_t covered = 0;  // columns [0, covered) belong to some window
        if (pr < s.pooled_rows && ph < s.ph) {
          covered = s.pw * s.kw;
          const int a0 = static_cast<int>(((r % s.kd) * s.kh + h % s.kh) * s.kw);
          const int64_t pooled_line = s.out_offset + (pr * s.ph + ph) * s.pw * s.c;
          for (int64_t pw = 0; pw < s.pw; ++pw) {
            const float* KOKKOS_RESTRICT d = dy + pooled_line + pw * s.c;
            const uint8_t* KOKKOS_RESTRICT at = argmax + pooled_line + pw * s.c;
            for (int64_t ww = 0; ww < s.kw; ++ww) {
              const int a = a0 + static_cast<int>(ww);
              float* KOKKOS_RESTRICT o = g + (pw * s.kw + ww) * s.c;
              for (int64_t c = 0; c < s.c; ++c) o[c] = gradient_if(at[c] == a, d + c);
            }
          }
        }
        for (int64_t i = covered * s.c; i < s.w * s.c; ++i) g[i] = 0.0f;
      });
}

void add_slab_gradient(const Tensor& sum, const Tensor& part) {
  const auto s = sum.view(), p = part.view();
  Kokkos::parallel_for(
      "tessera::conv_max_pool::sum_slab_gradients", RangePolicy(0, sum.numel()),
      KOKKOS_LAMBDA(const int64_t i) { s(i) += p(i); });
}

}  // namespace tessera::kokkos_backend
