#include "tessera/backends/kokkos/conv_kernels.hpp"

#include <KokkosBlas3_gemm.hpp>

#include <algorithm>

#include "blas_threads.hpp"
#include "conv_host_tiles.hpp"
#include "tessera/backends/kokkos/sweep.hpp"
#include "tessera/core/half_float.hpp"

namespace tessera::kokkos_backend {
namespace {

/// The geometry as plain integers that device lambdas can capture by value.
struct ConvIndex {
  int64_t batch, in_d, in_h, in_w, in_c, out_c;
  int64_t out_d, out_h, out_w;
  int64_t k_d, k_h, k_w;
  int64_t s_d, s_h, s_w;
  int64_t pad_d, pad_h, pad_w;
  int64_t dil_d, dil_h, dil_w;

  int64_t taps() const { return k_d * k_h * k_w; }
  int64_t columns() const { return taps() * in_c; }
  int64_t positions() const { return batch * out_d * out_h * out_w; }
  int64_t input_positions() const { return batch * in_d * in_h * in_w; }
};

ConvIndex index_of(const ops::ConvGeometry& g) {
  const auto o = g.out_size();
  ConvIndex c{};
  c.batch = g.batch;
  c.in_c = g.in_channels;
  c.out_c = g.out_channels;
  c.in_d = g.in_size[0], c.in_h = g.in_size[1], c.in_w = g.in_size[2];
  c.out_d = o[0], c.out_h = o[1], c.out_w = o[2];
  c.k_d = g.kernel[0], c.k_h = g.kernel[1], c.k_w = g.kernel[2];
  c.s_d = g.stride[0], c.s_h = g.stride[1], c.s_w = g.stride[2];
  c.pad_d = g.padding[0], c.pad_h = g.padding[1], c.pad_w = g.padding[2];
  c.dil_d = g.dilation[0], c.dil_h = g.dilation[1], c.dil_w = g.dilation[2];
  return c;
}

/// A 1x1x1 kernel with stride 1 and no padding reads each input position once, in order:
/// the input itself is the column matrix.
bool is_pointwise(const ops::ConvGeometry& g) {
  for (size_t i = 0; i < 3; ++i)
    if (g.kernel[i] != 1 || g.stride[i] != 1 || g.padding[i] != 0) return false;
  return true;
}

/// First and last output index along one axis whose window (start o·s − pad, taps spaced by
/// `dil`, `k` of them) contains input index i; first > last when none does.
KOKKOS_INLINE_FUNCTION int64_t first_window(int64_t i, int64_t pad, int64_t dil, int64_t k, int64_t s) {
  const int64_t a = i + pad - dil * (k - 1);
  return a <= 0 ? 0 : (a + s - 1) / s;
}
KOKKOS_INLINE_FUNCTION int64_t last_window(int64_t i, int64_t pad, int64_t s, int64_t out) {
  return math::min(out - 1, (i + pad) / s);
}

/// Output index along one axis that reads input index i through tap k, or -1.
KOKKOS_INLINE_FUNCTION int64_t window_of_tap(int64_t i, int64_t k, int64_t pad, int64_t dil, int64_t s, int64_t out) {
  const int64_t a = i + pad - k * dil;
  if (a < 0 || a % s != 0) return -1;
  const int64_t o = a / s;
  return o < out ? o : -1;
}

template <class T>
void gemm(const char* trans_a, const char* trans_b, const T* a, int64_t a_rows, int64_t a_cols, const T* b,
          int64_t b_rows, int64_t b_cols, T beta, T* c, int64_t c_rows, int64_t c_cols) {
  const UnmanagedMatrix<const T> A(a, static_cast<size_t>(a_rows), static_cast<size_t>(a_cols));
  const UnmanagedMatrix<const T> B(b, static_cast<size_t>(b_rows), static_cast<size_t>(b_cols));
  const UnmanagedMatrix<T> C(c, static_cast<size_t>(c_rows), static_cast<size_t>(c_cols));
  keep_blas_on_calling_thread();
  KokkosBlas::gemm(trans_a, trans_b, T(1), A, B, beta, C);
}

/// col[r, (tap, ci)] = x at the input position that output position p0 + r reads through
/// `tap`, or 0 in the padding.
template <class T>
void im2col(const ConvIndex& c, const DeviceView<const T>& x, int64_t p0, int64_t rows, const DeviceView<T>& col) {
  const int64_t taps = c.taps();
  Kokkos::parallel_for(
      "tessera::conv_im2col", MDPolicy<2>({0, 0}, {rows, taps}), KOKKOS_LAMBDA(const int64_t r, const int64_t t) {
        int64_t p = p0 + r;
        const int64_t ow = p % c.out_w;
        p /= c.out_w;
        const int64_t oh = p % c.out_h;
        p /= c.out_h;
        const int64_t od = p % c.out_d;
        const int64_t n = p / c.out_d;
        const int64_t kw = t % c.k_w;
        const int64_t kh = (t / c.k_w) % c.k_h;
        const int64_t kd = t / (c.k_w * c.k_h);
        const int64_t id = od * c.s_d - c.pad_d + kd * c.dil_d;
        const int64_t ih = oh * c.s_h - c.pad_h + kh * c.dil_h;
        const int64_t iw = ow * c.s_w - c.pad_w + kw * c.dil_w;
        const int64_t dst = (r * taps + t) * c.in_c;
        if (id < 0 || id >= c.in_d || ih < 0 || ih >= c.in_h || iw < 0 || iw >= c.in_w) {
          for (int64_t ci = 0; ci < c.in_c; ++ci) col(dst + ci) = T(0);
          return;
        }
        const int64_t src = (((n * c.in_d + id) * c.in_h + ih) * c.in_w + iw) * c.in_c;
        for (int64_t ci = 0; ci < c.in_c; ++ci) col(dst + ci) = x(src + ci);
      });
}

/// dx += the entries of dcol (rows p0 .. p0 + rows of the full column matrix) that were read
/// from each input element. A gather: every input element is owned by one thread, which adds
/// its terms in a fixed order.
template <class T>
void col2im_accumulate(const ConvIndex& c, const DeviceView<const T>& dcol, int64_t p0, int64_t rows,
                       const DeviceView<T>& dx) {
  const int64_t taps = c.taps();
  const int64_t p1 = p0 + rows;
  const int64_t first_line = p0 / c.out_w;
  const int64_t last_line = (p1 - 1) / c.out_w;
  Kokkos::parallel_for(
      "tessera::conv_col2im", RangePolicy(0, c.input_positions()), KOKKOS_LAMBDA(const int64_t q) {
        int64_t rest = q;
        const int64_t iw = rest % c.in_w;
        rest /= c.in_w;
        const int64_t ih = rest % c.in_h;
        rest /= c.in_h;
        const int64_t id = rest % c.in_d;
        const int64_t n = rest / c.in_d;
        // Output lines (n, od, oh) whose windows can hold this element span a box; when no line of
        // the chunk falls between its corners, the element gets nothing from this chunk.
        const int64_t od_lo = first_window(id, c.pad_d, c.dil_d, c.k_d, c.s_d);
        const int64_t od_hi = last_window(id, c.pad_d, c.s_d, c.out_d);
        const int64_t oh_lo = first_window(ih, c.pad_h, c.dil_h, c.k_h, c.s_h);
        const int64_t oh_hi = last_window(ih, c.pad_h, c.s_h, c.out_h);
        if (od_lo > od_hi || oh_lo > oh_hi) return;
        const int64_t line_lo = (n * c.out_d + od_lo) * c.out_h + oh_lo;
        const int64_t line_hi = (n * c.out_d + od_hi) * c.out_h + oh_hi;
        if (line_hi < first_line || line_lo > last_line) return;

        const int64_t dst = q * c.in_c;
        for (int64_t kd = 0; kd < c.k_d; ++kd) {
          const int64_t od = window_of_tap(id, kd, c.pad_d, c.dil_d, c.s_d, c.out_d);
          if (od < 0) continue;
          for (int64_t kh = 0; kh < c.k_h; ++kh) {
            const int64_t oh = window_of_tap(ih, kh, c.pad_h, c.dil_h, c.s_h, c.out_h);
            if (oh < 0) continue;
            for (int64_t kw = 0; kw < c.k_w; ++kw) {
              const int64_t ow = window_of_tap(iw, kw, c.pad_w, c.dil_w, c.s_w, c.out_w);
              if (ow < 0) continue;
              const int64_t p = ((n * c.out_d + od) * c.out_h + oh) * c.out_w + ow;
              if (p < p0 || p >= p1) continue;
              const int64_t src = ((p - p0) * taps + (kd * c.k_h + kh) * c.k_w + kw) * c.in_c;
              for (int64_t ci = 0; ci < c.in_c; ++ci) dx(dst + ci) += dcol(src + ci);
            }
          }
        }
      });
}

/// y[p, co] = bias[co] for every output position, so the gemms can accumulate onto it.
template <class T>
void broadcast_bias(const DeviceView<const T>& bias, int64_t positions, int64_t channels, const DeviceView<T>& y) {
  Kokkos::parallel_for(
      "tessera::conv_bias", MDPolicy<2>({0, 0}, {positions, channels}),
      KOKKOS_LAMBDA(const int64_t p, const int64_t co) { y(p * channels + co) = bias(co); });
}

}  // namespace

template <class T>
int64_t ConvWorkspace<T>::chunk_rows(const ops::ConvGeometry& g) const {
  const ConvIndex c = index_of(g);
  const int64_t fit = static_cast<int64_t>(budget_bytes_ / (sizeof(T) * static_cast<size_t>(c.columns())));
  return std::max<int64_t>(1, std::min(fit, c.positions()));
}

template <class T>
DeviceView<T> ConvWorkspace<T>::columns(size_t n) {
  if (columns_.extent(0) < n) {
    columns_ = DeviceView<T>();  // release first: the old and new buffers need not coexist
    columns_ = DeviceView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::conv_columns"), n);
  }
  return columns_;
}

template <class T>
DeviceView<double> ConvWorkspace<T>::partials(size_t n) {
  if (partials_.extent(0) < n) {
    partials_ = DeviceView<double>();
    partials_ = DeviceView<double>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::conv_partials"), n);
  }
  return partials_;
}

template <class T>
void sum_over_rows(const DeviceView<const T>& m, int64_t rows, int64_t channels, const DeviceView<T>& sums,
                   ConvWorkspace<T>& workspace) {
  // Blocks depend only on the sizes, never on the thread count; at most 4096 of them bounds the
  // partials while leaving blocks·channels large enough to keep every core busy.
  const int64_t block_rows = std::max<int64_t>(256, (rows + 4095) / 4096);
  const int64_t blocks = std::max<int64_t>(1, (rows + block_rows - 1) / block_rows);
  const DeviceView<double> partial = workspace.partials(static_cast<size_t>(blocks * channels));
  if constexpr (kOnHost) {
    // A block's rows one after another, each along its contiguous channels.
    const T* mp = m.data();
    double* pp = partial.data();
    Kokkos::parallel_for(
        "tessera::conv_sum_rows_blocks", RangePolicy(0, blocks), KOKKOS_LAMBDA(const int64_t b) {
          double* acc = pp + b * channels;
          for (int64_t ch = 0; ch < channels; ++ch) acc[ch] = 0.0;
          const int64_t end = math::min(rows, (b + 1) * block_rows);
          for (int64_t r = b * block_rows; r < end; ++r) {
            TESSERA_SIMD
            for (int64_t ch = 0; ch < channels; ++ch) acc[ch] += static_cast<double>(mp[r * channels + ch]);
          }
        });
  } else
  Kokkos::parallel_for(
      "tessera::conv_sum_rows_blocks", MDPolicy<2>({0, 0}, {blocks, channels}),
      KOKKOS_LAMBDA(const int64_t b, const int64_t ch) {
        const int64_t end = math::min(rows, (b + 1) * block_rows);
        double s = 0.0;
        for (int64_t r = b * block_rows; r < end; ++r) s += static_cast<double>(m(r * channels + ch));
        partial(b * channels + ch) = s;
      });
  Kokkos::parallel_for(
      "tessera::conv_sum_rows", RangePolicy(0, channels), KOKKOS_LAMBDA(const int64_t ch) {
        double s = 0.0;
        for (int64_t b = 0; b < blocks; ++b) s += partial(b * channels + ch);
        sums(ch) = static_cast<T>(s);
      });
}

template <class T>
void add_bias(const DeviceView<const T>& bias, int64_t positions, int64_t channels, const DeviceView<T>& y) {
  Kokkos::parallel_for(
      "tessera::conv_add_bias", MDPolicy<2>({0, 0}, {positions, channels}),
      KOKKOS_LAMBDA(const int64_t p, const int64_t c) { y(p * channels + c) += bias(c); });
}

void add_channel_bias(const Tensor& bias, const Tensor& y) {
  const int64_t channels = bias.numel();
  if (y.type() == ElementType::fp32) {
    add_bias<float>(bias.view(), y.numel() / channels, channels, y.view());
    return;
  }
  // A 16-bit output: the sum in fp32, rounded once.
  const auto b = bias.view();
  const auto v = y.half_view();
  const ElementType type = y.type();
  Kokkos::parallel_for(
      "tessera::conv_add_bias_half", MDPolicy<2>({0, 0}, {y.numel() / channels, channels}),
      KOKKOS_LAMBDA(const int64_t p, const int64_t c) {
        const int64_t i = p * channels + c;
        v(i) = half_float::to_half(half_float::from_half(v(i), type) + b(c), type);
      });
}

void sum_channels(const Tensor& dy, const Tensor& dbias, ConvWorkspace<float>& workspace) {
  const int64_t channels = dbias.numel();
  if (dy.type() == ElementType::fp32) {
    sum_over_rows<float>(dy.view(), dy.numel() / channels, channels, dbias.view(), workspace);
    return;
  }
  // A 16-bit gradient is widened as it is read; blocks and order as sum_over_rows.
  const int64_t rows = dy.numel() / channels;
  const int64_t block_rows = std::max<int64_t>(256, (rows + 4095) / 4096);
  const int64_t blocks = std::max<int64_t>(1, (rows + block_rows - 1) / block_rows);
  const DeviceView<double> partial = workspace.partials(static_cast<size_t>(blocks * channels));
  const auto m = dy.half_view();
  const ElementType type = dy.type();
  Kokkos::parallel_for(
      "tessera::conv_sum_rows_blocks_half", MDPolicy<2>({0, 0}, {blocks, channels}),
      KOKKOS_LAMBDA(const int64_t b, const int64_t ch) {
        const int64_t end = math::min(rows, (b + 1) * block_rows);
        double s = 0.0;
        for (int64_t r = b * block_rows; r < end; ++r) s += static_cast<double>(half_float::from_half(m(r * channels + ch), type));
        partial(b * channels + ch) = s;
      });
  const auto sums = dbias.view();
  Kokkos::parallel_for(
      "tessera::conv_sum_rows_half", RangePolicy(0, channels), KOKKOS_LAMBDA(const int64_t ch) {
        double s = 0.0;
        for (int64_t b = 0; b < blocks; ++b) s += partial(b * channels + ch);
        sums(ch) = static_cast<float>(s);
      });
}

template <class T>
void conv_forward(const ops::ConvGeometry& g, const DeviceView<const T>& x, const DeviceView<const T>& w,
                  const DeviceView<const T>& bias, const DeviceView<T>& y, ConvWorkspace<T>& workspace) {
  if (host_tiles::available<T>()) {
    host_tiles::forward<T>(g, x.data(), w.data(), bias.data(), y.data(), workspace.chunk_rows(g));
    return;
  }
  const ConvIndex c = index_of(g);
  const int64_t positions = c.positions();
  const int64_t k = c.columns();
  T beta = T(0);
  if (bias.data() != nullptr) {
    broadcast_bias(bias, positions, c.out_c, y);
    beta = T(1);
  }
  if (is_pointwise(g)) {
    gemm("N", "T", x.data(), positions, k, w.data(), c.out_c, k, beta, y.data(), positions, c.out_c);
    return;
  }
  const int64_t chunk = workspace.chunk_rows(g);
  const DeviceView<T> col = workspace.columns(static_cast<size_t>(chunk * k));
  for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
    const int64_t rows = std::min(chunk, positions - p0);
    im2col<T>(c, x, p0, rows, col);
    gemm<T>("N", "T", col.data(), rows, k, w.data(), c.out_c, k, beta, y.data() + p0 * c.out_c, rows, c.out_c);
  }
}

template <class T>
void conv_backward_data(const ops::ConvGeometry& g, const DeviceView<const T>& dy, const DeviceView<const T>& w,
                        const DeviceView<T>& dx, ConvWorkspace<T>& workspace) {
  if (host_tiles::available<T>() && host_tiles::gathers_input_gradient(g)) {
    host_tiles::backward_data<T>(g, dy.data(), w.data(), dx.data(), workspace.chunk_rows(g));
    return;
  }
  const ConvIndex c = index_of(g);
  const int64_t positions = c.positions();
  const int64_t k = c.columns();
  if (is_pointwise(g)) {
    gemm("N", "N", dy.data(), positions, c.out_c, w.data(), c.out_c, k, T(0), dx.data(), positions, k);
    return;
  }
  Kokkos::deep_copy(dx, T(0));
  const int64_t chunk = workspace.chunk_rows(g);
  const DeviceView<T> dcol = workspace.columns(static_cast<size_t>(chunk * k));
  for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
    const int64_t rows = std::min(chunk, positions - p0);
    gemm<T>("N", "N", dy.data() + p0 * c.out_c, rows, c.out_c, w.data(), c.out_c, k, T(0), dcol.data(), rows, k);
    col2im_accumulate<T>(c, dcol, p0, rows, dx);
  }
}

template <class T>
void conv_backward_weights(const ops::ConvGeometry& g, const DeviceView<const T>& x, const DeviceView<const T>& dy,
                           const DeviceView<T>& dw, const DeviceView<T>& dbias, ConvWorkspace<T>& workspace) {
  const ConvIndex c = index_of(g);
  const int64_t positions = c.positions();
  const int64_t k = c.columns();
  if (dbias.data() != nullptr) sum_over_rows<T>(dy, positions, c.out_c, dbias, workspace);
  if (host_tiles::available<T>()) {
    host_tiles::backward_weights<T>(g, x.data(), dy.data(), dw.data(), workspace.chunk_rows(g));
    return;
  }
  if (is_pointwise(g)) {
    gemm("T", "N", dy.data(), positions, c.out_c, x.data(), positions, k, T(0), dw.data(), c.out_c, k);
    return;
  }
  const int64_t chunk = workspace.chunk_rows(g);
  const DeviceView<T> col = workspace.columns(static_cast<size_t>(chunk * k));
  for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
    const int64_t rows = std::min(chunk, positions - p0);
    im2col<T>(c, x, p0, rows, col);
    // The first chunk overwrites dw; later ones accumulate in chunk order.
    gemm<T>("T", "N", dy.data() + p0 * c.out_c, rows, c.out_c, col.data(), rows, k, p0 == 0 ? T(0) : T(1), dw.data(),
            c.out_c, k);
  }
}

#define TESSERA_INSTANTIATE_CONV_KERNELS(T)                                                                       \
  template class ConvWorkspace<T>;                                                                                \
  template void conv_forward<T>(const ops::ConvGeometry&, const DeviceView<const T>&, const DeviceView<const T>&, \
                                const DeviceView<const T>&, const DeviceView<T>&, ConvWorkspace<T>&);             \
  template void conv_backward_data<T>(const ops::ConvGeometry&, const DeviceView<const T>&,                       \
                                      const DeviceView<const T>&, const DeviceView<T>&, ConvWorkspace<T>&);       \
  template void conv_backward_weights<T>(const ops::ConvGeometry&, const DeviceView<const T>&,                    \
                                         const DeviceView<const T>&, const DeviceView<T>&, const DeviceView<T>&,  \
                                         ConvWorkspace<T>&);                                                      \
  template void sum_over_rows<T>(const DeviceView<const T>&, int64_t, int64_t, const DeviceView<T>&,              \
                                 ConvWorkspace<T>&);                                                              \
  template void add_bias<T>(const DeviceView<const T>&, int64_t, int64_t, const DeviceView<T>&);

TESSERA_INSTANTIATE_CONV_KERNELS(float)
TESSERA_INSTANTIATE_CONV_KERNELS(double)
#undef TESSERA_INSTANTIATE_CONV_KERNELS

}  // namespace tessera::kokkos_backend
