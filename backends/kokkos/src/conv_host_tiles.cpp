#include "conv_host_tiles.hpp"

#include <KokkosKernels_config.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "blas_threads.hpp"
#include "conv_window_map.hpp"
#include "tessera/backends/kokkos/host_sgemm.hpp"
#include "tessera/core/kokkos_compat.hpp"

#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
// The Fortran BLAS that Kokkos Kernels' TPL links (column-major, every argument by address).
extern "C" {
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc);
}
#endif

namespace tessera::kokkos_backend::host_tiles {
// Named, not anonymous: the tile lambdas of the exported functions capture these types.
namespace tile_detail {

constexpr bool kHostMemory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

/// C = alpha·op(A)·op(B) + beta·C in column-major terms, on the calling thread.
template <class T>
void gemm_cm(char ta, char tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
             T beta, T* c, int64_t ldc) {
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const int la = static_cast<int>(lda), lb = static_cast<int>(ldb), lc = static_cast<int>(ldc);
  const T one = T(1);
  if constexpr (std::is_same_v<T, float>)
    sgemm_(&ta, &tb, &mi, &ni, &ki, &one, a, &la, b, &lb, &beta, c, &lc);
  else
    dgemm_(&ta, &tb, &mi, &ni, &ki, &one, a, &la, b, &lb, &beta, c, &lc);
#else
  (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)beta, (void)c,
      (void)ldc;
#endif
}

/// The geometry's sizes (how positions read their windows is conv_window_map's).
struct Dims {
  int64_t n, in_d, in_h, in_w, in_c, out_c, out_d, out_h, out_w, k_d, k_h, k_w;
  int64_t taps() const { return k_d * k_h * k_w; }
};

Dims dims_of(const ops::ConvGeometry& g) {
  const auto o = g.out_size();
  return {g.batch, g.in_size[0], g.in_size[1], g.in_size[2], g.in_channels, g.out_channels,
          o[0],    o[1],         o[2],         g.kernel[0], g.kernel[1],   g.kernel[2]};
}

/// dst[0, count) = src[0, count). A loop the compiler vectorises, not memcpy: a window line is a
/// few hundred bytes, and a library call per line cost as much as the copy.
template <class T>
void copy_values(T* dst, const T* src, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = src[i];
}
template <class T>
void zero_values(T* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = T(0);
}

/// One line of a window: k_w chunks of c values, chunk j the position w0 + j·dl of `line` (a
/// row of `width` positions, null where the whole line lies in the padding), zero outside
/// [0, width). Undilated lines are one copy between two runs of zeros.
template <class T>
void window_line(T* dst, const T* line, int64_t w0, int64_t k_w, int64_t dl, int64_t width, int64_t c) {
  if (line == nullptr) {
    zero_values(dst, k_w * c);
    return;
  }
  if (dl == 1) {
    const int64_t lo = std::clamp<int64_t>(-w0, 0, k_w), hi = std::clamp<int64_t>(width - w0, lo, k_w);
    zero_values(dst, lo * c);
    copy_values(dst + lo * c, line + (w0 + lo) * c, (hi - lo) * c);
    zero_values(dst + hi * c, (k_w - hi) * c);
    return;
  }
  for (int64_t j = 0; j < k_w; ++j, dst += c) {
    const int64_t w = w0 + j * dl;
    if (w < 0 || w >= width)
      zero_values(dst, c);
    else
      copy_values(dst, line + w * c, c);
  }
}

/// Rows [p0, p0 + rows) of the column matrix of `map` over the unpadded `src`: col[r, (tap, c)]
/// = the source value position p0 + r reads through tap, 0 outside the source. With
/// forward_windows the forward's im2col; with input_gradient_windows the output gradient's
/// columns of a stride-1 input gradient, taps in gather_tap order (double's BLAS paths).
template <class T>
void window_columns(const WindowMap& map, const T* src, int64_t p0, int64_t rows, T* col) {
  const int64_t c = map.channels, k_w = map.taps[2], k = map.taps[0] * map.taps[1] * k_w * c;
  for (int64_t r = 0; r < rows; ++r) {
    const auto [n, o0, o1, o2] = map.position(p0 + r);
    T* dst = col + r * k;
    for (int64_t t0 = 0; t0 < map.taps[0]; ++t0) {
      const int64_t i0 = o0 * map.step[0] + map.offset[0] + t0 * map.tap_step[0];
      for (int64_t t1 = 0; t1 < map.taps[1]; ++t1, dst += k_w * c) {
        const int64_t i1 = o1 * map.step[1] + map.offset[1] + t1 * map.tap_step[1];
        const bool inside = i0 >= 0 && i0 < map.src[0] && i1 >= 0 && i1 < map.src[1];
        const T* line = inside ? src + ((n * map.src[0] + i0) * map.src[1] + i1) * map.src[2] * c : nullptr;
        window_line(dst, line, o2 * map.step[2] + map.offset[2], k_w, map.tap_step[2], map.src[2], c);
      }
    }
  }
}

/// The tap order of the output gradient's columns: w reversed (kw' = k_w - 1 - kw), so that
/// along kw' the output positions a stride-1 input reads rise, as im2col's do.
int64_t gather_tap(const Dims& d, int64_t kd, int64_t kh, int64_t kw) {
  return (kd * d.k_h + kh) * d.k_w + (d.k_w - 1 - kw);
}

/// f(tile, slot) for every tile, in parallel; `slot` < slots() is the calling thread's own
/// (its scratch), distinct among the tiles running at once.
template <class F>
void for_each_tile(const char* label, int64_t tiles, const F& f) {
  Kokkos::Experimental::UniqueToken<Kokkos::DefaultHostExecutionSpace> token;
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, tiles),
                       [=](const int64_t t) {
                         const int slot = token.acquire();
                         f(t, slot);
                         token.release(slot);
                       });
}

int slots() {
  return Kokkos::Experimental::UniqueToken<Kokkos::DefaultHostExecutionSpace>().size();
}

/// Scratch memory for one use (`Use` tells the uses apart), grown as needed and kept, so that
/// steady-state steps allocate nothing. Layers run their convolutions one at a time.
template <class T, int Use>
T* scratch(size_t elements) {
  static std::vector<T> buffer;
  if (buffer.size() < elements) buffer.assign(elements, T(0));
  return buffer.data();
}
enum { kColumns, kWeights, kPartials, kPanels, kPadded, kCorners };

}  // namespace tile_detail
using namespace tile_detail;

template <class T>
bool available() {
  // fp32 runs on host_sgemm, Tessera's own; double on the Fortran BLAS.
  if constexpr (std::is_same_v<T, float>) return kHostMemory;
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  return kHostMemory;
#else
  return false;
#endif
}
template bool available<float>();
template bool available<double>();

TilePlan plan(int64_t positions, int64_t columns, int64_t max_rows) {
  TilePlan p;
  // A tile's column matrix about the size of a core's L2 (512 KiB), at least 32 rows (a gemm
  // narrower than that runs far below the BLAS's peak) and at most 2048. fp32 builds no column
  // matrix: there the same count sizes a tile's window corners and leaves each thread many
  // tiles of a few hundred positions.
  p.rows = std::clamp<int64_t>((int64_t{512} << 10) / (4 * std::max<int64_t>(1, columns)), 32, 2048);
  p.rows = std::max<int64_t>(1, std::min({p.rows, max_rows, positions}));
  p.tiles = (positions + p.rows - 1) / p.rows;
  return p;
}

/// out (positions × n_out) = (bias) + the implicit product of `map`'s windows over `src` with
/// the packed weights: fp32's forward and input gradient.
void gathered_convolution(const char* label, const WindowMap& map, const float* src, const host_sgemm::Kernel& kernel,
                          const float* panels, int64_t n_out, const float* bias, float* out, int64_t max_rows) {
  const int64_t k = map.taps[0] * map.taps[1] * map.taps[2] * map.channels, positions = map.positions();
  float* padded = scratch<float, kPadded>(static_cast<size_t>(map.padded_values()));
  pad_source(map, src, padded);
  const std::vector<host_sgemm::Segment> segments = window_segments(map);
  const host_sgemm::Segment* segs = segments.data();
  const auto count = static_cast<int64_t>(segments.size());
  const TilePlan p = plan(positions, k, max_rows);
  const float** corners = scratch<const float*, kCorners>(static_cast<size_t>(slots() * p.rows));
  for_each_tile(label, p.tiles, [=](int64_t t, int slot) {
    const int64_t p0 = t * p.rows, rows = std::min(p.rows, positions - p0);
    const float** tile_corners = corners + slot * p.rows;
    window_corners(map, padded, p0, rows, tile_corners);
    float* ot = out + p0 * n_out;
    if (bias != nullptr)
      for (int64_t r = 0; r < rows; ++r) std::memcpy(ot + r * n_out, bias, static_cast<size_t>(n_out) * sizeof(float));
    host_sgemm::multiply_gathered(kernel, rows, n_out, tile_corners, segs, count, panels, k, ot, n_out,
                                  bias != nullptr);
  });
}

template <class T>
void forward(const ops::ConvGeometry& g, const T* x, const T* w, const T* bias, T* y, int64_t max_rows) {
  const Dims d = dims_of(g);
  const int64_t positions = d.n * d.out_d * d.out_h * d.out_w, k = d.taps() * d.in_c;
  if constexpr (std::is_same_v<T, float>) {
    // y = windows of x · wᵀ, wᵀ packed once for every tile.
    const host_sgemm::Kernel kernel = host_sgemm::choose(host_sgemm::widest(), d.out_c);
    float* wt = scratch<float, kPanels>(static_cast<size_t>(host_sgemm::packed_b_size(kernel, k, d.out_c)));
    host_sgemm::pack_b(kernel, k, d.out_c, w, 1, k, wt);
    gathered_convolution("tessera::conv_forward_tiles", forward_windows(g), x, kernel, wt, d.out_c, bias, y,
                         max_rows);
    return;
  }
  const TilePlan p = plan(positions, k, max_rows);
  T* cols = scratch<T, kColumns>(static_cast<size_t>(slots() * p.rows * k));
  keep_blas_on_calling_thread();
  const WindowMap map = forward_windows(g);
  for_each_tile("tessera::conv_forward_tiles", p.tiles, [=](int64_t t, int slot) {
    const int64_t p0 = t * p.rows, rows = std::min(p.rows, positions - p0);
    T* col = cols + slot * p.rows * k;
    T* yt = y + p0 * d.out_c;
    window_columns(map, x, p0, rows, col);
    if (bias != nullptr)
      for (int64_t r = 0; r < rows; ++r) std::memcpy(yt + r * d.out_c, bias, static_cast<size_t>(d.out_c) * sizeof(T));
    // yᵀ (out_c × rows, column-major) = w (out_c × k) · colᵀ.
    gemm_cm<T>('T', 'N', d.out_c, rows, k, w, k, col, k, bias != nullptr ? T(1) : T(0), yt, d.out_c);
  });
}

bool gathers_input_gradient(const ops::ConvGeometry& g) {
  return g.stride[0] == 1 && g.stride[1] == 1 && g.stride[2] == 1;
}

template <class T>
void backward_data(const ops::ConvGeometry& g, const T* dy, const T* w, T* dx, int64_t max_rows) {
  const Dims d = dims_of(g);
  const int64_t inputs = d.n * d.in_d * d.in_h * d.in_w, k2 = d.taps() * d.out_c;
  // w2[(gather_tap, co), ci] = w[co, tap, ci]: the weights as the gather's right-hand side.
  T* w2p = scratch<T, kWeights>(static_cast<size_t>(k2 * d.in_c));
  for (int64_t co = 0; co < d.out_c; ++co)
    for (int64_t kd = 0; kd < d.k_d; ++kd)
      for (int64_t kh = 0; kh < d.k_h; ++kh)
        for (int64_t kw = 0; kw < d.k_w; ++kw) {
          const int64_t tap = (kd * d.k_h + kh) * d.k_w + kw;
          std::memcpy(w2p + (gather_tap(d, kd, kh, kw) * d.out_c + co) * d.in_c, w + (co * d.taps() + tap) * d.in_c,
                      static_cast<size_t>(d.in_c) * sizeof(T));
        }
  if constexpr (std::is_same_v<T, float>) {
    // dx = windows of dy (stride 1: a convolution with the taps turned round) · w2.
    const host_sgemm::Kernel kernel = host_sgemm::choose(host_sgemm::widest(), d.in_c);
    float* w2panels = scratch<float, kPanels>(static_cast<size_t>(host_sgemm::packed_b_size(kernel, k2, d.in_c)));
    host_sgemm::pack_b(kernel, k2, d.in_c, w2p, d.in_c, 1, w2panels);
    gathered_convolution("tessera::conv_backward_data_tiles", input_gradient_windows(g), dy, kernel, w2panels,
                         d.in_c, nullptr, dx, max_rows);
    return;
  }
  const TilePlan p = plan(inputs, k2, max_rows);
  keep_blas_on_calling_thread();
  T* cols = scratch<T, kColumns>(static_cast<size_t>(slots() * p.rows * k2));
  const WindowMap map = input_gradient_windows(g);
  for_each_tile("tessera::conv_backward_data_tiles", p.tiles, [=](int64_t t, int slot) {
    const int64_t q0 = t * p.rows, rows = std::min(p.rows, inputs - q0);
    T* dcol = cols + slot * p.rows * k2;
    window_columns(map, dy, q0, rows, dcol);
    // dxᵀ (in_c × rows) = w2ᵀ (in_c × k2) · dcolᵀ (k2 × rows).
    gemm_cm<T>('N', 'N', d.in_c, rows, k2, w2p, d.in_c, dcol, k2, T(0), dx + q0 * d.in_c, d.in_c);
  });
}

template <class T>
void backward_weights(const ops::ConvGeometry& g, const T* x, const T* dy, T* dw, int64_t max_rows) {
  const Dims d = dims_of(g);
  const int64_t positions = d.n * d.out_d * d.out_h * d.out_w, k = d.taps() * d.in_c;
  const TilePlan p = plan(positions, k, max_rows);
  // Groups of tiles, each summed into its own partial: as many as 16, as few as the partials'
  // memory (32 MiB) allows, never more than tiles. A function of the sizes only.
  const int64_t weights = d.out_c * k;
  const int64_t groups = std::clamp<int64_t>((int64_t{32} << 20) / (static_cast<int64_t>(sizeof(T)) * weights), 1,
                                             std::min<int64_t>(16, p.tiles));
  T* parts = scratch<T, kPartials>(static_cast<size_t>(groups * weights));
  const WindowMap map = forward_windows(g);
  if constexpr (std::is_same_v<T, float>) {
    // dw[co, line] += Σ over a tile's positions of dy[pos, co] · the window line of pos, read
    // in place from the padded input (up to a block's width past a line's end: the slack).
    const int64_t slack = 64;
    float* padded = scratch<float, kPadded>(static_cast<size_t>(map.padded_values() + slack));
    pad_source(map, x, padded);
    std::fill(padded + map.padded_values(), padded + map.padded_values() + slack, 0.0f);
    const std::vector<host_sgemm::Segment> segments = window_segments(map);
    const host_sgemm::Segment* segs = segments.data();
    const auto count = static_cast<int64_t>(segments.size());
    const host_sgemm::Kernel kernel = host_sgemm::choose(host_sgemm::widest(), segments.front().length);
    const float** corners = scratch<const float*, kCorners>(static_cast<size_t>(slots() * p.rows));
    for_each_tile("tessera::conv_backward_weights_tiles", groups, [=](int64_t group, int slot) {
      const float** tile_corners = corners + slot * p.rows;
      for (int64_t t = group; t < p.tiles; t += groups) {
        const int64_t p0 = t * p.rows, rows = std::min(p.rows, positions - p0);
        window_corners(map, padded, p0, rows, tile_corners);
        for (int64_t s = 0; s < count; ++s)
          host_sgemm::multiply_gathered_b(kernel, d.out_c, segs[s].length, rows, dy + p0 * d.out_c, d.out_c,
                                          tile_corners, segs[s].a_offset, parts + group * weights + segs[s].b_row, k,
                                          t != group);
      }
    });
  } else {
    keep_blas_on_calling_thread();
    T* cols = scratch<T, kColumns>(static_cast<size_t>(slots() * p.rows * k));
    for_each_tile("tessera::conv_backward_weights_tiles", groups, [=](int64_t group, int slot) {
      T* col = cols + slot * p.rows * k;
      for (int64_t t = group; t < p.tiles; t += groups) {
        const int64_t p0 = t * p.rows, rows = std::min(p.rows, positions - p0);
        window_columns(map, x, p0, rows, col);
        // dwᵀ (k × out_c) += colᵀ (k × rows) · dy (rows × out_c).
        gemm_cm<T>('N', 'T', k, d.out_c, rows, col, k, dy + p0 * d.out_c, d.out_c, t == group ? T(0) : T(1),
                   parts + group * weights, k);
      }
    });
  }
  Kokkos::parallel_for("tessera::conv_backward_weights_sum",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, weights), [=](const int64_t i) {
                         T s = parts[i];
                         for (int64_t group = 1; group < groups; ++group) s += parts[group * weights + i];
                         dw[i] = s;
                       });
}

template void forward<float>(const ops::ConvGeometry&, const float*, const float*, const float*, float*, int64_t);
template void forward<double>(const ops::ConvGeometry&, const double*, const double*, const double*, double*,
                              int64_t);
template void backward_data<float>(const ops::ConvGeometry&, const float*, const float*, float*, int64_t);
template void backward_data<double>(const ops::ConvGeometry&, const double*, const double*, double*, int64_t);
template void backward_weights<float>(const ops::ConvGeometry&, const float*, const float*, float*, int64_t);
template void backward_weights<double>(const ops::ConvGeometry&, const double*, const double*, double*, int64_t);

}  // namespace tessera::kokkos_backend::host_tiles
