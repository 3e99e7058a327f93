#include "tessera/backends/kokkos/pool_kernels.hpp"

#include "tessera/backends/kokkos/storage_types.hpp"
#include "tessera/backends/kokkos/sweep.hpp"

namespace tessera::kokkos_backend {
namespace {

/// The geometry as plain integers that device lambdas can capture by value.
struct PoolIndex {
  int64_t batch, in_d, in_h, in_w, channels;
  int64_t out_d, out_h, out_w;
  int64_t k_d, k_h, k_w;
  int64_t s_d, s_h, s_w;
  int64_t pad_d, pad_h, pad_w;
};

PoolIndex index_of(const ops::PoolGeometry& g) {
  const auto o = g.out_size();
  PoolIndex c{};
  c.batch = g.batch;
  c.channels = g.channels;
  c.in_d = g.in_size[0], c.in_h = g.in_size[1], c.in_w = g.in_size[2];
  c.out_d = o[0], c.out_h = o[1], c.out_w = o[2];
  c.k_d = g.kernel[0], c.k_h = g.kernel[1], c.k_w = g.kernel[2];
  c.s_d = g.stride[0], c.s_h = g.stride[1], c.s_w = g.stride[2];
  c.pad_d = g.padding[0], c.pad_h = g.padding[1], c.pad_w = g.padding[2];
  return c;
}

/// The taps [lo, hi) of a window starting at `start` (may be negative) that fall inside [0, in).
KOKKOS_INLINE_FUNCTION int64_t first_tap(int64_t start) { return start < 0 ? -start : 0; }
KOKKOS_INLINE_FUNCTION int64_t end_tap(int64_t start, int64_t k, int64_t in) { return math::min(k, in - start); }

/// The windows [lo, hi] along one axis that contain input index i.
KOKKOS_INLINE_FUNCTION int64_t first_window(int64_t i, int64_t pad, int64_t k, int64_t s) {
  const int64_t a = i + pad - (k - 1);
  return a <= 0 ? 0 : (a + s - 1) / s;
}
KOKKOS_INLINE_FUNCTION int64_t last_window(int64_t i, int64_t pad, int64_t s, int64_t out) {
  return math::min(out - 1, (i + pad) / s);
}

/// How many of window (od, oh, ow)'s taps lie inside the input: an average's divisor.
KOKKOS_INLINE_FUNCTION int64_t window_size(const PoolIndex& c, int64_t od, int64_t oh, int64_t ow) {
  const int64_t d0 = od * c.s_d - c.pad_d, h0 = oh * c.s_h - c.pad_h, w0 = ow * c.s_w - c.pad_w;
  return (end_tap(d0, c.k_d, c.in_d) - first_tap(d0)) * (end_tap(h0, c.k_h, c.in_h) - first_tap(h0)) *
         (end_tap(w0, c.k_w, c.in_w) - first_tap(w0));
}

/// f(out, tap, size) for every window that holds input (n, id, ih, iw): `out` the window's
/// first output element, `tap` the input's tap in it, `size` its taps inside the input. The
/// backward passes' gather, one input a thread (no atomics).
template <class F>
KOKKOS_INLINE_FUNCTION void for_each_window_of(const PoolIndex& c, int64_t n, int64_t id, int64_t ih, int64_t iw,
                                               const F& f) {
  const int64_t od_hi = last_window(id, c.pad_d, c.s_d, c.out_d);
  const int64_t oh_hi = last_window(ih, c.pad_h, c.s_h, c.out_h);
  const int64_t ow_hi = last_window(iw, c.pad_w, c.s_w, c.out_w);
  for (int64_t od = first_window(id, c.pad_d, c.k_d, c.s_d); od <= od_hi; ++od)
    for (int64_t oh = first_window(ih, c.pad_h, c.k_h, c.s_h); oh <= oh_hi; ++oh)
      for (int64_t ow = first_window(iw, c.pad_w, c.k_w, c.s_w); ow <= ow_hi; ++ow)
        f((((n * c.out_d + od) * c.out_h + oh) * c.out_w + ow) * c.channels,
          static_cast<int32_t>(((id + c.pad_d - od * c.s_d) * c.k_h + ih + c.pad_h - oh * c.s_h) * c.k_w + iw +
                               c.pad_w - ow * c.s_w),
          window_size(c, od, oh, ow));
}

// The host sweeps: a work item takes a row of output (or input) positions, (n, d, h) fixed,
// and each position's channels are one contiguous run that the innermost loop vectorises: a
// window's taps are visited one after another, each tap's run of channels compared with, or
// added to, the output's run in L1. (The device versions below keep one thread per position.)

/// Windows that tile the input exactly (kernel = stride, no padding, every input in a window):
/// the pooling of CNNs. Each window's taps are plain offsets, with none of the general path's
/// bounds and divisions per position, which at 16 channels cost more than the data.
bool tiles_exactly(const PoolIndex& c) {
  return c.k_d == c.s_d && c.k_h == c.s_h && c.k_w == c.s_w && c.pad_d == 0 && c.pad_h == 0 && c.pad_w == 0 &&
         c.out_d * c.k_d == c.in_d && c.out_h * c.k_h == c.in_h && c.out_w * c.k_w == c.in_w;
}

/// f(tap, input offset of the tap from the window's first element) for each tap of a window.
template <class F>
KOKKOS_INLINE_FUNCTION void for_each_tap(const PoolIndex& c, const F& f) {
  int32_t tap = 0;
  for (int64_t kd = 0; kd < c.k_d; ++kd)
    for (int64_t kh = 0; kh < c.k_h; ++kh)
      for (int64_t kw = 0; kw < c.k_w; ++kw, ++tap) f(tap, ((kd * c.in_h + kh) * c.in_w + kw) * c.channels);
}

/// Values stored as the type they are compared in.
template <class T>
struct Plain {
  using Bits = T;
  KOKKOS_INLINE_FUNCTION static T widen(T v) { return v; }
  KOKKOS_INLINE_FUNCTION static T narrow(T v) { return v; }
};

/// S: the storage of x and y (Plain<T>, or Bf16 whose values the comparison widens exactly and
/// narrowing gives back bit for bit), T the type compared in.
///
/// Channels go in blocks of kBlock whose running maximum and argmax stay in local arrays (the
/// compiler's registers) across the window's taps, y and the argmax written once: tap by tap
/// through y, bf16 widened and rounded back its running maximum at every tap, and ran at 0.08
/// of the triad (0.14-0.27 so, measured in pairs on 2 cores at S=64); fp32 stayed at 0.27
/// either way. A version with the block loop in a function of its own, pointers restrict-
/// qualified, ran at a quarter of this one.
// The tiled rows are compiled per x86-64 level on the host (sweep.hpp); nvcc compiles them
// for the device too, since a non-template caller instantiates the host path in a CUDA build.
#if defined(__CUDACC__)
#define TESSERA_POOL_ROW KOKKOS_INLINE_FUNCTION
#else
#define TESSERA_POOL_ROW TESSERA_HOST_CLONES
#endif

/// One output row (n, d, h) of the tiled max pool forward: the body of
/// max_pool_forward_tiled's work item, a function of its own so that it is compiled per x86-64
/// level like the sweeps (sweep.hpp): bf16's widening and comparison of a block of channels ran
/// at a fifth of the triad in SSE2.
template <class T, class S>
TESSERA_POOL_ROW void max_pool_forward_row(const PoolIndex c, const typename S::Bits* x, typename S::Bits* y,
                                              int32_t* argmax, const int64_t ndh) {
  constexpr int64_t kBlock = 16;
  const int64_t n = ndh / (c.out_d * c.out_h), od = ndh / c.out_h % c.out_d, oh = ndh % c.out_h;
  for (int64_t ow = 0; ow < c.out_w; ++ow) {
    const typename S::Bits* first =
        x + (((n * c.in_d + od * c.k_d) * c.in_h + oh * c.k_h) * c.in_w + ow * c.k_w) * c.channels;
    typename S::Bits* yo = y + (ndh * c.out_w + ow) * c.channels;
    int32_t* ao = argmax + (ndh * c.out_w + ow) * c.channels;
    int64_t ch0 = 0;
    for (; ch0 + kBlock <= c.channels; ch0 += kBlock) {
      T best[kBlock];
      int32_t arg[kBlock];
      TESSERA_SIMD
      for (int64_t j = 0; j < kBlock; ++j) {
        best[j] = static_cast<T>(S::widen(first[ch0 + j]));
        arg[j] = 0;
      }
      for_each_tap(c, [&](int32_t tap, int64_t offset) {
        if (tap == 0) return;
        const typename S::Bits* xi = first + offset + ch0;
        // Branch-free: a select GCC keeps as a branch mispredicts half the time.
        TESSERA_SIMD
        for (int64_t j = 0; j < kBlock; ++j) {
          const T v = static_cast<T>(S::widen(xi[j]));
          const int32_t better = -static_cast<int32_t>(v > best[j]);
          best[j] = v > best[j] ? v : best[j];
          arg[j] = (tap & better) | (arg[j] & ~better);
        }
      });
      TESSERA_SIMD
      for (int64_t j = 0; j < kBlock; ++j) {
        yo[ch0 + j] = S::narrow(best[j]);
        ao[ch0 + j] = arg[j];
      }
    }
    if (ch0 == c.channels) continue;
    // The channels past the last whole block, tap by tap through y.
    for_each_tap(c, [&](int32_t tap, int64_t offset) {
      const typename S::Bits* xi = first + offset;
      if (tap == 0) {
        for (int64_t ch = ch0; ch < c.channels; ++ch) {
          yo[ch] = xi[ch];
          ao[ch] = 0;
        }
        return;
      }
      for (int64_t ch = ch0; ch < c.channels; ++ch) {
        const T v = static_cast<T>(S::widen(xi[ch])), best = static_cast<T>(S::widen(yo[ch]));
        const int32_t better = -static_cast<int32_t>(v > best);
        yo[ch] = S::narrow(v > best ? v : best);
        ao[ch] = (tap & better) | (ao[ch] & ~better);
      }
    });
  }
}

template <class T, class S = Plain<T>>
void max_pool_forward_tiled(const PoolIndex c, const typename S::Bits* x, typename S::Bits* y, int32_t* argmax) {
  Kokkos::parallel_for(
      "tessera::max_pool_forward", RangePolicy(0, c.batch * c.out_d * c.out_h),
      KOKKOS_LAMBDA(const int64_t ndh) { max_pool_forward_row<T, S>(c, x, y, argmax, ndh); });
}

/// One output row (n, d, h) of the tiled max pool backward, compiled per x86-64 level
/// (max_pool_forward_row says why). Each input element lies in exactly one window: written
/// once, with its window's gradient where it was the maximum and 0 elsewhere.
template <class T, class S>
TESSERA_POOL_ROW void max_pool_backward_row(const PoolIndex c, const typename S::Bits* dy, const int32_t* argmax,
                                               typename S::Bits* dx, const int64_t ndh) {
  const int64_t n = ndh / (c.out_d * c.out_h), od = ndh / c.out_h % c.out_d, oh = ndh % c.out_h;
  for (int64_t ow = 0; ow < c.out_w; ++ow) {
    typename S::Bits* first =
        dx + (((n * c.in_d + od * c.k_d) * c.in_h + oh * c.k_h) * c.in_w + ow * c.k_w) * c.channels;
    const typename S::Bits* g = dy + (ndh * c.out_w + ow) * c.channels;
    const int32_t* a = argmax + (ndh * c.out_w + ow) * c.channels;
    for_each_tap(c, [&](int32_t tap, int64_t offset) {
      typename S::Bits* di = first + offset;
      TESSERA_SIMD
      for (int64_t ch = 0; ch < c.channels; ++ch) {
        // Loaded unconditionally, so that the select needs no branch; all-zero bits are 0
        // in every storage type.
        const typename S::Bits v = g[ch];
        di[ch] = a[ch] == tap ? v : typename S::Bits(0);
      }
    });
  }
}

template <class T, class S = Plain<T>>
void max_pool_backward_tiled(const PoolIndex c, const typename S::Bits* dy, const int32_t* argmax,
                             typename S::Bits* dx) {
  Kokkos::parallel_for(
      "tessera::max_pool_backward", RangePolicy(0, c.batch * c.out_d * c.out_h),
      KOKKOS_LAMBDA(const int64_t ndh) { max_pool_backward_row<T, S>(c, dy, argmax, dx, ndh); });
}

template <class T>
void max_pool_forward_host(const PoolIndex c, const T* x, T* y, int32_t* argmax) {
  Kokkos::parallel_for(
      "tessera::max_pool_forward", RangePolicy(0, c.batch * c.out_d * c.out_h), KOKKOS_LAMBDA(const int64_t ndh) {
        const int64_t n = ndh / (c.out_d * c.out_h), od = ndh / c.out_h % c.out_d, oh = ndh % c.out_h;
        const int64_t d0 = od * c.s_d - c.pad_d, h0 = oh * c.s_h - c.pad_h;
        for (int64_t ow = 0; ow < c.out_w; ++ow) {
          const int64_t w0 = ow * c.s_w - c.pad_w;
          T* yo = y + (ndh * c.out_w + ow) * c.channels;
          int32_t* ao = argmax + (ndh * c.out_w + ow) * c.channels;
          bool first = true;
          for (int64_t kd = first_tap(d0); kd < end_tap(d0, c.k_d, c.in_d); ++kd)
            for (int64_t kh = first_tap(h0); kh < end_tap(h0, c.k_h, c.in_h); ++kh)
              for (int64_t kw = first_tap(w0); kw < end_tap(w0, c.k_w, c.in_w); ++kw) {
                const T* xi = x + (((n * c.in_d + d0 + kd) * c.in_h + h0 + kh) * c.in_w + w0 + kw) * c.channels;
                const int32_t tap = static_cast<int32_t>((kd * c.k_h + kh) * c.k_w + kw);
                if (first) {
                  TESSERA_SIMD
                  for (int64_t ch = 0; ch < c.channels; ++ch) {
                    yo[ch] = xi[ch];
                    ao[ch] = tap;
                  }
                  first = false;
                  continue;
                }
                // Branch-free, as a mask: written with a select on `better` GCC keeps a branch,
                // which random data mispredicts half the time (14 ms, not 0.5, at 64³ x 16).
                TESSERA_SIMD
                for (int64_t ch = 0; ch < c.channels; ++ch) {
                  const T v = xi[ch], best = yo[ch];
                  const int32_t better = -static_cast<int32_t>(v > best);
                  yo[ch] = v > best ? v : best;
                  ao[ch] = (tap & better) | (ao[ch] & ~better);
                }
              }
          if (first) {  // a window wholly in the padding
            for (int64_t ch = 0; ch < c.channels; ++ch) {
              yo[ch] = T(0);
              ao[ch] = -1;
            }
          }
        }
      });
}

template <class T>
void max_pool_backward_host(const PoolIndex c, const T* dy, const int32_t* argmax, T* dx) {
  Kokkos::parallel_for(
      "tessera::max_pool_backward", RangePolicy(0, c.batch * c.in_d * c.in_h), KOKKOS_LAMBDA(const int64_t ndh) {
        const int64_t n = ndh / (c.in_d * c.in_h), id = ndh / c.in_h % c.in_d, ih = ndh % c.in_h;
        for (int64_t iw = 0; iw < c.in_w; ++iw) {
          T* di = dx + (ndh * c.in_w + iw) * c.channels;
          TESSERA_SIMD
          for (int64_t ch = 0; ch < c.channels; ++ch) di[ch] = T(0);
          for_each_window_of(c, n, id, ih, iw, [&](int64_t out, int32_t tap, int64_t) {
            const T* g = dy + out;
            const int32_t* a = argmax + out;
            TESSERA_SIMD
            for (int64_t ch = 0; ch < c.channels; ++ch) {
              const T v = g[ch];  // loaded unconditionally, so that the select needs no branch
              di[ch] += a[ch] == tap ? v : T(0);
            }
          });
        }
      });
}

template <class T>
void avg_pool_forward_host(const PoolIndex c, const T* x, T* y) {
  Kokkos::parallel_for(
      "tessera::avg_pool_forward", RangePolicy(0, c.batch * c.out_d * c.out_h), KOKKOS_LAMBDA(const int64_t ndh) {
        const int64_t n = ndh / (c.out_d * c.out_h), od = ndh / c.out_h % c.out_d, oh = ndh % c.out_h;
        const int64_t d0 = od * c.s_d - c.pad_d, h0 = oh * c.s_h - c.pad_h;
        for (int64_t ow = 0; ow < c.out_w; ++ow) {
          const int64_t w0 = ow * c.s_w - c.pad_w;
          T* yo = y + (ndh * c.out_w + ow) * c.channels;
          const int64_t count = window_size(c, od, oh, ow);
          TESSERA_SIMD
          for (int64_t ch = 0; ch < c.channels; ++ch) yo[ch] = T(0);
          for (int64_t kd = first_tap(d0); kd < end_tap(d0, c.k_d, c.in_d); ++kd)
            for (int64_t kh = first_tap(h0); kh < end_tap(h0, c.k_h, c.in_h); ++kh)
              for (int64_t kw = first_tap(w0); kw < end_tap(w0, c.k_w, c.in_w); ++kw) {
                const T* xi = x + (((n * c.in_d + d0 + kd) * c.in_h + h0 + kh) * c.in_w + w0 + kw) * c.channels;
                TESSERA_SIMD
                for (int64_t ch = 0; ch < c.channels; ++ch) yo[ch] += xi[ch];
              }
          TESSERA_SIMD
          for (int64_t ch = 0; ch < c.channels; ++ch) yo[ch] /= static_cast<T>(count);
        }
      });
}

template <class T>
void avg_pool_backward_host(const PoolIndex c, const T* dy, T* dx) {
  Kokkos::parallel_for(
      "tessera::avg_pool_backward", RangePolicy(0, c.batch * c.in_d * c.in_h), KOKKOS_LAMBDA(const int64_t ndh) {
        const int64_t n = ndh / (c.in_d * c.in_h), id = ndh / c.in_h % c.in_d, ih = ndh % c.in_h;
        for (int64_t iw = 0; iw < c.in_w; ++iw) {
          T* di = dx + (ndh * c.in_w + iw) * c.channels;
          TESSERA_SIMD
          for (int64_t ch = 0; ch < c.channels; ++ch) di[ch] = T(0);
          for_each_window_of(c, n, id, ih, iw, [&](int64_t out, int32_t, int64_t size) {
            const T count = static_cast<T>(size);
            const T* g = dy + out;
            TESSERA_SIMD
            for (int64_t ch = 0; ch < c.channels; ++ch) di[ch] += g[ch] / count;
          });
        }
      });
}

}  // namespace

// Each kernel runs over spatial positions and loops over channels innermost: the position is
// decoded once for all channels (integer division dominated the per-element version: 0.6 s
// for one 4x64^3x32 max-pool backward on 2 cores) and channel accesses are contiguous.

template <class T>
void max_pool_forward(const ops::PoolGeometry& g, const DeviceView<const T>& x, const DeviceView<T>& y,
                      const PoolArgmax& argmax) {
  const PoolIndex c = index_of(g);
  if constexpr (kOnHost) {
    if (tiles_exactly(c)) return max_pool_forward_tiled<T>(c, x.data(), y.data(), argmax.data());
    return max_pool_forward_host<T>(c, x.data(), y.data(), argmax.data());
  }
  Kokkos::parallel_for(
      "tessera::max_pool_forward", MDPolicy<3>({0, 0, 0}, {c.batch * c.out_d, c.out_h, c.out_w}),
      KOKKOS_LAMBDA(const int64_t nd, const int64_t oh, const int64_t ow) {
        const int64_t n = nd / c.out_d, od = nd % c.out_d;
        const int64_t d0 = od * c.s_d - c.pad_d, h0 = oh * c.s_h - c.pad_h, w0 = ow * c.s_w - c.pad_w;
        const int64_t out = ((nd * c.out_h + oh) * c.out_w + ow) * c.channels;
        for (int64_t ch = 0; ch < c.channels; ++ch) {
          T best = T(0);
          int32_t best_tap = -1;
          for (int64_t kd = first_tap(d0); kd < end_tap(d0, c.k_d, c.in_d); ++kd)
            for (int64_t kh = first_tap(h0); kh < end_tap(h0, c.k_h, c.in_h); ++kh)
              for (int64_t kw = first_tap(w0); kw < end_tap(w0, c.k_w, c.in_w); ++kw) {
                const T v = x((((n * c.in_d + d0 + kd) * c.in_h + h0 + kh) * c.in_w + w0 + kw) * c.channels + ch);
                if (best_tap < 0 || v > best) {
                  best = v;
                  best_tap = static_cast<int32_t>((kd * c.k_h + kh) * c.k_w + kw);
                }
              }
          y(out + ch) = best;
          argmax(out + ch) = best_tap;
        }
      });
}

template <class T>
void max_pool_backward(const ops::PoolGeometry& g, const DeviceView<const T>& dy, const PoolArgmax& argmax,
                       const DeviceView<T>& dx) {
  const PoolIndex c = index_of(g);
  if constexpr (kOnHost) {
    if (tiles_exactly(c)) return max_pool_backward_tiled<T>(c, dy.data(), argmax.data(), dx.data());
    return max_pool_backward_host<T>(c, dy.data(), argmax.data(), dx.data());
  }
  Kokkos::parallel_for(
      "tessera::max_pool_backward", MDPolicy<3>({0, 0, 0}, {c.batch * c.in_d, c.in_h, c.in_w}),
      KOKKOS_LAMBDA(const int64_t nd, const int64_t ih, const int64_t iw) {
        const int64_t n = nd / c.in_d, id = nd % c.in_d;
        const int64_t in = ((nd * c.in_h + ih) * c.in_w + iw) * c.channels;
        const int64_t channels = c.channels;  // the window's body captures no PoolIndex (file-local type)
        for (int64_t ch = 0; ch < channels; ++ch) dx(in + ch) = T(0);
        for_each_window_of(c, n, id, ih, iw, [&](int64_t out, int32_t tap, int64_t) {
          for (int64_t ch = 0; ch < channels; ++ch)
            if (argmax(out + ch) == tap) dx(in + ch) += dy(out + ch);
        });
      });
}

template <class T>
void avg_pool_forward(const ops::PoolGeometry& g, const DeviceView<const T>& x, const DeviceView<T>& y) {
  const PoolIndex c = index_of(g);
  if constexpr (kOnHost) return avg_pool_forward_host<T>(c, x.data(), y.data());
  Kokkos::parallel_for(
      "tessera::avg_pool_forward", MDPolicy<3>({0, 0, 0}, {c.batch * c.out_d, c.out_h, c.out_w}),
      KOKKOS_LAMBDA(const int64_t nd, const int64_t oh, const int64_t ow) {
        const int64_t n = nd / c.out_d, od = nd % c.out_d;
        const int64_t d0 = od * c.s_d - c.pad_d, h0 = oh * c.s_h - c.pad_h, w0 = ow * c.s_w - c.pad_w;
        const int64_t out = ((nd * c.out_h + oh) * c.out_w + ow) * c.channels;
        const int64_t count = window_size(c, od, oh, ow);
        for (int64_t ch = 0; ch < c.channels; ++ch) y(out + ch) = T(0);
        for (int64_t kd = first_tap(d0); kd < end_tap(d0, c.k_d, c.in_d); ++kd)
          for (int64_t kh = first_tap(h0); kh < end_tap(h0, c.k_h, c.in_h); ++kh)
            for (int64_t kw = first_tap(w0); kw < end_tap(w0, c.k_w, c.in_w); ++kw) {
              const int64_t in = (((n * c.in_d + d0 + kd) * c.in_h + h0 + kh) * c.in_w + w0 + kw) * c.channels;
              for (int64_t ch = 0; ch < c.channels; ++ch) y(out + ch) += x(in + ch);
            }
        for (int64_t ch = 0; ch < c.channels; ++ch) y(out + ch) /= static_cast<T>(count);
      });
}

template <class T>
void avg_pool_backward(const ops::PoolGeometry& g, const DeviceView<const T>& dy, const DeviceView<T>& dx) {
  const PoolIndex c = index_of(g);
  if constexpr (kOnHost) return avg_pool_backward_host<T>(c, dy.data(), dx.data());
  Kokkos::parallel_for(
      "tessera::avg_pool_backward", MDPolicy<3>({0, 0, 0}, {c.batch * c.in_d, c.in_h, c.in_w}),
      KOKKOS_LAMBDA(const int64_t nd, const int64_t ih, const int64_t iw) {
        const int64_t n = nd / c.in_d, id = nd % c.in_d;
        const int64_t in = ((nd * c.in_h + ih) * c.in_w + iw) * c.channels;
        const int64_t channels = c.channels;  // the window's body captures no PoolIndex (file-local type)
        for (int64_t ch = 0; ch < channels; ++ch) dx(in + ch) = T(0);
        for_each_window_of(c, n, id, ih, iw, [&](int64_t out, int32_t, int64_t size) {
          const T count = static_cast<T>(size);
          for (int64_t ch = 0; ch < channels; ++ch) dx(in + ch) += dy(out + ch) / count;
        });
      });
}

bool max_pool_forward_bf16(const ops::PoolGeometry& g, const DeviceView<const uint16_t>& x,
                           const DeviceView<uint16_t>& y, const PoolArgmax& argmax) {
  const PoolIndex c = index_of(g);
  if constexpr (kOnHost) {
    if (!tiles_exactly(c)) return false;
    max_pool_forward_tiled<float, Bf16>(c, x.data(), y.data(), argmax.data());
    return true;
  }
  return false;
}

bool max_pool_backward_bf16(const ops::PoolGeometry& g, const DeviceView<const uint16_t>& dy, const PoolArgmax& argmax,
                            const DeviceView<uint16_t>& dx) {
  const PoolIndex c = index_of(g);
  if constexpr (kOnHost) {
    if (!tiles_exactly(c)) return false;
    max_pool_backward_tiled<float, Bf16>(c, dy.data(), argmax.data(), dx.data());
    return true;
  }
  return false;
}

#define TESSERA_INSTANTIATE_POOL_KERNELS(T)                                                                      \
  template void max_pool_forward<T>(const ops::PoolGeometry&, const DeviceView<const T>&, const DeviceView<T>&,  \
                                    const PoolArgmax&);                                                          \
  template void max_pool_backward<T>(const ops::PoolGeometry&, const DeviceView<const T>&, const PoolArgmax&,    \
                                     const DeviceView<T>&);                                                      \
  template void avg_pool_forward<T>(const ops::PoolGeometry&, const DeviceView<const T>&, const DeviceView<T>&); \
  template void avg_pool_backward<T>(const ops::PoolGeometry&, const DeviceView<const T>&, const DeviceView<T>&);

TESSERA_INSTANTIATE_POOL_KERNELS(float)
TESSERA_INSTANTIATE_POOL_KERNELS(double)
#undef TESSERA_INSTANTIATE_POOL_KERNELS

}  // namespace tessera::kokkos_backend
