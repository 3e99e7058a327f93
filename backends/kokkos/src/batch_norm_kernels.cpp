#include "tessera/backends/kokkos/batch_norm_kernels.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

#include "tessera/backends/kokkos/activation_rows.hpp"
#include "tessera/backends/kokkos/sweep.hpp"
#include "tessera/core/half_float.hpp"

namespace tessera::kokkos_backend {
namespace {

// Activations (x, y, dy, dx) are read and written through these: as they are in float and
// double, as bf16 bit patterns (uint16_t) otherwise, computing in the statistics' type.
KOKKOS_INLINE_FUNCTION float value(float v) { return v; }
KOKKOS_INLINE_FUNCTION double value(double v) { return v; }
KOKKOS_INLINE_FUNCTION float value(uint16_t bits) { return half_float::from_bf16(bits); }
template <class A, class T>
KOKKOS_INLINE_FUNCTION A stored(T v) {
  if constexpr (std::is_same_v<A, uint16_t>)
    return half_float::to_bf16(static_cast<float>(v));
  else
    return static_cast<A>(v);
}

/// sums[c] = Σ_r a(r, c), sums[channels + c] = Σ_r b(r, c) where `term(index, c, origin, a, b)`
/// gives the two terms of element `index` = r·channels + c in the type T. Rows are cut into the
/// workspace's blocks (fixed by the geometry); each block sums its rows in order, then each
/// channel sums its blocks in order in double: the same bits for any thread count.
///
/// On the host a block runs along its rows' contiguous channels, summing in T (fp32 in the op):
/// fp32 adds at twice double's rate, which the generic x86-64 build's 16-byte vectors need to
/// keep up with memory. A shifted term (Term::kShifted: the statistics) sums x − origin, the
/// origin being the block's first row, and the block's sums are moved back to the origin in
/// double (Σx = Σd + n·o, Σx² = Σd² + 2o·Σd + n·o²): the fp32 sums then hold deviations from
/// a value near the channel's mean, and lose no more than double block sums did. On a device one
/// thread per (block, channel), adjacent channels on adjacent threads, in double.
constexpr int64_t kStackChannels = 1024;  // a host block's running sums live on its stack

/// The host blocks' sums, each in T along its rows' contiguous channels (channels ≤
/// kStackChannels); a shifted term's sums are moved back to the origin in double.
template <class T, class Term>
void block_sums_host(const std::string& label, int64_t rows, int64_t channels, const Term& term,
                     const ChannelSumWorkspace& partial) {
  const int64_t blocks = static_cast<int64_t>(partial.extent(0)), block_rows = (rows + blocks - 1) / blocks;
  Kokkos::parallel_for(
      label + "_blocks", RangePolicy(0, blocks), KOKKOS_LAMBDA(const int64_t b) {
        const Term t = term;  // a local copy: its members stay in registers (sweep.hpp)
        T sa[kStackChannels], sb[kStackChannels], origin[kStackChannels];
        const int64_t first = b * block_rows, end = math::min(rows, first + block_rows);
        for (int64_t c = 0; c < channels; ++c) {
          origin[c] = Term::kShifted && first < end ? t.value_at(first * channels + c) : T(0);
          sa[c] = sb[c] = T(0);
        }
        for (int64_t r = first; r < end; ++r) {
          TESSERA_SIMD
          for (int64_t c = 0; c < channels; ++c) {
            T ta, tb;
            t(r * channels + c, c, origin[c], ta, tb);
            sa[c] += ta;
            sb[c] += tb;
          }
        }
        const double n = static_cast<double>(end - first);
        for (int64_t c = 0; c < channels; ++c) {
          const double o = static_cast<double>(origin[c]), a = static_cast<double>(sa[c]);
          partial(b, c) = a + n * o;
          partial(b, channels + c) = static_cast<double>(sb[c]) + 2.0 * o * a + n * o * o;
        }
      });
}

/// The blocks' sums in double, unshifted: on a device one thread per (block, channel), adjacent
/// channels on adjacent threads; on the host (more channels than a stack holds) along rows.
template <class T, class Term>
void block_sums_wide(const std::string& label, int64_t rows, int64_t channels, const Term& term,
                     const ChannelSumWorkspace& partial) {
  const int64_t blocks = static_cast<int64_t>(partial.extent(0)), block_rows = (rows + blocks - 1) / blocks;
  Kokkos::parallel_for(
      label + "_blocks", MDPolicy<2>({0, 0}, {blocks, channels}), KOKKOS_LAMBDA(const int64_t b, const int64_t c) {
        const int64_t end = math::min(rows, (b + 1) * block_rows);
        double a = 0.0, s = 0.0;
        for (int64_t r = b * block_rows; r < end; ++r) {
          T ta, tb;
          term(r * channels + c, c, T(0), ta, tb);
          a += static_cast<double>(ta);
          s += static_cast<double>(tb);
        }
        partial(b, c) = a;
        partial(b, channels + c) = s;
      });
}

/// sums[c] = Σ_r a(r, c), sums[channels + c] = Σ_r b(r, c) where `term(index, c, origin, a, b)`
/// gives the two terms of element `index` = r·channels + c in the type T. Rows are cut into the
/// workspace's blocks (fixed by the geometry); each block sums its rows in order, then each
/// channel sums its blocks in order in double: the same bits for any thread count.
///
/// On the host a block runs along its rows' contiguous channels, summing in T (fp32 in the op):
/// fp32 adds at twice double's rate, which the generic x86-64 build's 16-byte vectors need to
/// keep up with memory. A shifted term (Term::kShifted: the statistics) sums x − origin, the
/// origin being the block's first row, and the block's sums are moved back to the origin in
/// double (Σx = Σd + n·o, Σx² = Σd² + 2o·Σd + n·o²): the fp32 sums then hold deviations from
/// a value near the channel's mean, and lose no more than double block sums did.
template <class T, class Term>
void channel_sums(const std::string& label, int64_t rows, int64_t channels, const Term& term,
                  const ChannelSumWorkspace& partial, const Vector<T>& sums) {
  bool summed = false;
  if constexpr (kOnHost) {
    if (channels <= kStackChannels) {
      block_sums_host<T>(label, rows, channels, term, partial);
      summed = true;
    }
  }
  if (!summed) block_sums_wide<T>(label, rows, channels, term, partial);
  const int64_t blocks = static_cast<int64_t>(partial.extent(0));
  Kokkos::parallel_for(
      label + "_channels", RangePolicy(0, channels), KOKKOS_LAMBDA(const int64_t c) {
        double a = 0.0, s = 0.0;
        for (int64_t b = 0; b < blocks; ++b) {
          a += partial(b, c);
          s += partial(b, channels + c);
        }
        sums(c) = static_cast<T>(a);
        sums(channels + c) = static_cast<T>(s);
      });
}

/// x − origin and its square (the statistics' terms).
template <class T, class A>
struct SumAndSquareTerm {
  static constexpr bool kShifted = true;
  const A* x;
  KOKKOS_INLINE_FUNCTION T value_at(int64_t i) const { return static_cast<T>(value(x[i])); }
  KOKKOS_INLINE_FUNCTION void operator()(int64_t i, int64_t /*c*/, T origin, T& a, T& b) const {
    a = static_cast<T>(value(x[i])) - origin;
    b = a * a;
  }
};

/// g = dy·f'(z) with z = x·scale + shift, and x̂ = (x − mean)·invstd, for element i of channel c.
template <class Row, class T, class A>
struct GradientOfOutput {
  const A* x;
  const A* dy;
  const T* mean;
  const T* invstd;
  const T* scale;
  const T* shift;
  T alpha;
  KOKKOS_INLINE_FUNCTION void operator()(int64_t i, int64_t c, T& g, T& xhat) const {
    const T v = value(x[i]);
    g = static_cast<T>(value(dy[i])) * Row::template derivative<T>(v * scale[c] + shift[c], alpha);
    xhat = (v - mean[c]) * invstd[c];
  }
};

template <class Row, class T, class A>
GradientOfOutput<Row, T, A> gradient_of_output(const ActivationsIn<A>& x, const ActivationsIn<A>& dy,
                                               const BatchNormChannels<T>& ch, T alpha) {
  return {x.data(), dy.data(), ch.mean.data(), ch.invstd.data(), ch.scale.data(), ch.shift.data(), alpha};
}

template <class Row, class T, class A>
struct GradientTerm {
  static constexpr bool kShifted = false;
  GradientOfOutput<Row, T, A> grad;
  KOKKOS_INLINE_FUNCTION T value_at(int64_t /*i*/) const { return T(0); }
  KOKKOS_INLINE_FUNCTION void operator()(int64_t i, int64_t c, T /*origin*/, T& a, T& b) const {
    T xhat;
    grad(i, c, a, xhat);
    b = a * xhat;
  }
};

template <class Row, class T, class A>
void forward_with(const ActivationsIn<A>& x, int64_t rows, int64_t channels, const BatchNormChannels<T>& ch, T alpha,
                  const ActivationsOut<A>& y) {
  const A* xp = x.data();
  A* yp = y.data();
  const T* scale = ch.scale.data();
  const T* shift = ch.shift.data();
  for_each_element("tessera::batch_norm_forward", rows, channels, KOKKOS_LAMBDA(const int64_t i, const int64_t c) {
    yp[i] = stored<A>(Row::template value<T>(static_cast<T>(value(xp[i])) * scale[c] + shift[c], alpha));
  });
}

template <class Row, class T, class A>
void backward_statistics_with(const ActivationsIn<A>& x, const ActivationsIn<A>& dy, int64_t rows, int64_t channels,
                              const BatchNormChannels<T>& ch, T alpha, const ChannelSumWorkspace& workspace,
                              const Vector<T>& sums) {
  channel_sums<T>("tessera::batch_norm_backward_statistics", rows, channels,
                  GradientTerm<Row, T, A>{gradient_of_output<Row, T, A>(x, dy, ch, alpha)}, workspace, sums);
}

template <class Row, class T, class A>
void backward_data_with(const ActivationsIn<A>& x, const ActivationsIn<A>& dy, int64_t rows, int64_t channels,
                        const BatchNormChannels<T>& ch, T alpha, const ConstVector<T>& sums_v, double count,
                        bool batch_stats, const ActivationsOut<A>& dx) {
  const auto grad = gradient_of_output<Row, T, A>(x, dy, ch, alpha);
  const T* scale = ch.scale.data();
  const T* sums = sums_v.data();
  A* dxp = dx.data();
  if (!batch_stats) {
    for_each_element("tessera::batch_norm_backward_data_fixed", rows, channels,
                     KOKKOS_LAMBDA(const int64_t i, const int64_t c) {
                       T g, xhat;
                       grad(i, c, g, xhat);
                       dxp[i] = stored<A>(scale[c] * g);
                     });
    return;
  }
  const T inv_count = static_cast<T>(1.0 / count);
  for_each_element("tessera::batch_norm_backward_data", rows, channels, KOKKOS_LAMBDA(const int64_t i, const int64_t c) {
    T g, xhat;
    grad(i, c, g, xhat);
    dxp[i] = stored<A>(scale[c] * (g - sums[c] * inv_count - xhat * sums[channels + c] * inv_count));
  });
}

}  // namespace

ChannelSumWorkspace make_channel_sum_workspace(int64_t rows, int64_t channels) {
  const int64_t by_rows = (rows + 15) / 16;
  const int64_t by_memory = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, channels));
  const int64_t blocks = std::max<int64_t>(1, std::min(by_rows, by_memory));
  return ChannelSumWorkspace(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::channel_sum_workspace"),
                             static_cast<size_t>(blocks), static_cast<size_t>(2 * channels));
}

template <class T>
void batch_norm_scale_shift(const ConstVector<T>& mean, const ConstVector<T>& invstd, const ConstVector<T>& gamma,
                            const ConstVector<T>& beta, const Vector<T>& scale, const Vector<T>& shift) {
  Kokkos::parallel_for(
      "tessera::batch_norm_scale_shift", RangePolicy(0, static_cast<int64_t>(mean.extent(0))),
      KOKKOS_LAMBDA(const int64_t c) {
        scale(c) = gamma(c) * invstd(c);
        shift(c) = beta(c) - mean(c) * scale(c);
      });
}

template <class T, class A>
void batch_norm_statistics(const ActivationsIn<A>& x, int64_t rows, int64_t channels,
                           const ChannelSumWorkspace& workspace, const Vector<T>& sums) {
  channel_sums<T>("tessera::batch_norm_statistics", rows, channels, SumAndSquareTerm<T, A>{x.data()}, workspace, sums);
}

template <class T, class A>
void batch_norm_forward(const ActivationsIn<A>& x, int64_t rows, int64_t channels, const BatchNormChannels<T>& ch,
                        const ops::BatchNormEpilogue& epilogue, const ActivationsOut<A>& y) {
  with_activation_row(epilogue.active, epilogue.kind, [&](auto row) {
    forward_with<decltype(row), T, A>(x, rows, channels, ch, static_cast<T>(epilogue.alpha), y);
  });
}

template <class T, class A>
void batch_norm_backward_statistics(const ActivationsIn<A>& x, const ActivationsIn<A>& dy, int64_t rows, int64_t channels,
                                    const BatchNormChannels<T>& ch, const ops::BatchNormEpilogue& epilogue,
                                    const ChannelSumWorkspace& workspace, const Vector<T>& sums) {
  with_activation_row(epilogue.active, epilogue.kind, [&](auto row) {
    backward_statistics_with<decltype(row), T, A>(x, dy, rows, channels, ch, static_cast<T>(epilogue.alpha), workspace,
                                                  sums);
  });
}

template <class T, class A>
void batch_norm_backward_data(const ActivationsIn<A>& x, const ActivationsIn<A>& dy, int64_t rows, int64_t channels,
                              const BatchNormChannels<T>& ch, const ops::BatchNormEpilogue& epilogue,
                              const ConstVector<T>& sums, double count, bool batch_stats, const ActivationsOut<A>& dx) {
  with_activation_row(epilogue.active, epilogue.kind, [&](auto row) {
    backward_data_with<decltype(row), T, A>(x, dy, rows, channels, ch, static_cast<T>(epilogue.alpha), sums, count,
                                            batch_stats, dx);
  });
}

#define TESSERA_INSTANTIATE_BATCH_NORM_KERNELS(T, A)                                                                  \
  template void batch_norm_statistics<T, A>(const ActivationsIn<A>&, int64_t, int64_t, const ChannelSumWorkspace&,    \
                                            const Vector<T>&);                                                        \
  template void batch_norm_forward<T, A>(const ActivationsIn<A>&, int64_t, int64_t, const BatchNormChannels<T>&,      \
                                         const ops::BatchNormEpilogue&, const ActivationsOut<A>&);                    \
  template void batch_norm_backward_statistics<T, A>(const ActivationsIn<A>&, const ActivationsIn<A>&, int64_t,       \
                                                     int64_t, const BatchNormChannels<T>&,                            \
                                                     const ops::BatchNormEpilogue&, const ChannelSumWorkspace&,       \
                                                     const Vector<T>&);                                               \
  template void batch_norm_backward_data<T, A>(const ActivationsIn<A>&, const ActivationsIn<A>&, int64_t, int64_t,    \
                                               const BatchNormChannels<T>&, const ops::BatchNormEpilogue&,            \
                                               const ConstVector<T>&, double, bool, const ActivationsOut<A>&);

template void batch_norm_scale_shift<float>(const ConstVector<float>&, const ConstVector<float>&,
                                            const ConstVector<float>&, const ConstVector<float>&, const Vector<float>&,
                                            const Vector<float>&);
template void batch_norm_scale_shift<double>(const ConstVector<double>&, const ConstVector<double>&,
                                             const ConstVector<double>&, const ConstVector<double>&,
                                             const Vector<double>&, const Vector<double>&);
TESSERA_INSTANTIATE_BATCH_NORM_KERNELS(float, float)
TESSERA_INSTANTIATE_BATCH_NORM_KERNELS(double, double)
TESSERA_INSTANTIATE_BATCH_NORM_KERNELS(float, uint16_t)  // bf16 activations, fp32 statistics
#undef TESSERA_INSTANTIATE_BATCH_NORM_KERNELS
// Free functions rather than members of the layer: CUDA's extended lambdas may not live in private
// members.

void batch_norm_batch_statistics(const Tensor& sums_t, double count, double momentum, double epsilon,
                                 const Tensor& mean_t, const Tensor& invstd_t, const Tensor& running_mean_t,
                                 const Tensor& running_var_t) {
  const auto sums = sums_t.view();
  const auto mean = mean_t.view();
  const auto invstd = invstd_t.view();
  const auto running_mean = running_mean_t.view();
  const auto running_var = running_var_t.view();
  const int64_t channels = mean_t.numel();
  const double unbias = count / (count - 1.0);
  Kokkos::parallel_for(
      "tessera::batch_norm_batch_statistics", RangePolicy(0, channels), KOKKOS_LAMBDA(const int64_t c) {
        const double m = static_cast<double>(sums(c)) / count;
        // E[x²] − mean² can round below zero for a (nearly) constant channel.
        const double var = math::max(static_cast<double>(sums(channels + c)) / count - m * m, 0.0);
        mean(c) = static_cast<float>(m);
        invstd(c) = static_cast<float>(1.0 / math::sqrt(var + epsilon));
        running_mean(c) = static_cast<float>((1.0 - momentum) * running_mean(c) + momentum * m);
        running_var(c) = static_cast<float>((1.0 - momentum) * running_var(c) + momentum * var * unbias);
      });
}

void batch_norm_running_statistics(const Tensor& running_mean_t, const Tensor& running_var_t, double epsilon,
                                   const Tensor& mean_t, const Tensor& invstd_t) {
  const auto mean = mean_t.view();
  const auto invstd = invstd_t.view();
  const auto running_mean = running_mean_t.view();
  const auto running_var = running_var_t.view();
  Kokkos::parallel_for(
      "tessera::batch_norm_running_statistics", RangePolicy(0, mean_t.numel()), KOKKOS_LAMBDA(const int64_t c) {
        mean(c) = running_mean(c);
        invstd(c) = static_cast<float>(1.0 / math::sqrt(static_cast<double>(running_var(c)) + epsilon));
      });
}

}  // namespace tessera::kokkos_backend
