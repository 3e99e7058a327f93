#include "tessera/backends/kokkos/batch_norm_kernels.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

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

/// sums[c] = Σ_r a(r, c), sums[channels + c] = Σ_r b(r, c) where `term(index, c, a, b)` adds
/// the two terms of element `index` = r·channels + c. Each (block, channel) pair sums its rows
/// in order (adjacent channels read adjacent memory), then each channel sums its blocks in order.
template <class T, class Term>
void channel_sums(const std::string& label, int64_t rows, int64_t channels, const Term& term,
                  const ChannelSumWorkspace& partial, const Vector<T>& sums) {
  const int64_t blocks = static_cast<int64_t>(partial.extent(0));
  const int64_t block_rows = (rows + blocks - 1) / blocks;
  Kokkos::parallel_for(
      label + "_blocks", MDPolicy<2>({0, 0}, {blocks, channels}), KOKKOS_LAMBDA(const int64_t b, const int64_t c) {
        const int64_t begin = b * block_rows;
        const int64_t end = math::min(rows, begin + block_rows);
        double a = 0.0, s = 0.0;
        for (int64_t r = begin; r < end; ++r) term(r * channels + c, c, a, s);
        partial(b, c) = a;
        partial(b, channels + c) = s;
      });
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

template <class A>
struct SumAndSquareTerm {
  ConstVector<A> x;
  KOKKOS_INLINE_FUNCTION void operator()(int64_t i, int64_t /*c*/, double& a, double& b) const {
    const double v = static_cast<double>(value(x(i)));
    a += v;
    b += v * v;
  }
};

template <class T, class A>
struct GradientTerm {
  ConstVector<A> x, dy;
  ConstVector<T> mean, invstd;
  KOKKOS_INLINE_FUNCTION void operator()(int64_t i, int64_t c, double& a, double& b) const {
    const double g = static_cast<double>(value(dy(i)));
    a += g;
    b += g * static_cast<double>((value(x(i)) - mean(c)) * invstd(c));
  }
};

}  // namespace

ChannelSumWorkspace make_channel_sum_workspace(int64_t rows, int64_t channels) {
  const int64_t by_rows = (rows + 15) / 16;
  const int64_t by_memory = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, channels));
  const int64_t blocks = std::max<int64_t>(1, std::min(by_rows, by_memory));
  return ChannelSumWorkspace(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::channel_sum_workspace"),
                             static_cast<size_t>(blocks), static_cast<size_t>(2 * channels));
}

template <class T, class A>
void batch_norm_statistics(const ActivationsIn<A>& x, int64_t rows, int64_t channels,
                           const ChannelSumWorkspace& workspace, const Vector<T>& sums) {
  channel_sums<T>("tessera::batch_norm_statistics", rows, channels, SumAndSquareTerm<A>{x}, workspace, sums);
}

template <class T, class A>
void batch_norm_normalize(const ActivationsIn<A>& x, int64_t rows, int64_t channels, const ConstVector<T>& mean,
                          const ConstVector<T>& invstd, const ConstVector<T>& gamma, const ConstVector<T>& beta,
                          const ActivationsOut<A>& y) {
  Kokkos::parallel_for(
      "tessera::batch_norm_normalize", RangePolicy(0, rows * channels), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t c = i % channels;
        y(i) = stored<A>(gamma(c) * (value(x(i)) - mean(c)) * invstd(c) + beta(c));
      });
}

template <class T, class A>
void batch_norm_backward_statistics(const ActivationsIn<A>& x, const ActivationsIn<A>& dy, int64_t rows, int64_t channels,
                                    const ConstVector<T>& mean, const ConstVector<T>& invstd,
                                    const ChannelSumWorkspace& workspace, const Vector<T>& sums) {
  channel_sums<T>("tessera::batch_norm_backward_statistics", rows, channels,
                  GradientTerm<T, A>{x, dy, mean, invstd}, workspace, sums);
}

template <class T, class A>
void batch_norm_backward_data(const ActivationsIn<A>& x, const ActivationsIn<A>& dy, int64_t rows, int64_t channels,
                              const ConstVector<T>& mean, const ConstVector<T>& invstd, const ConstVector<T>& gamma,
                              const ConstVector<T>& sums, double count, bool batch_stats, const ActivationsOut<A>& dx) {
  if (!batch_stats) {
    Kokkos::parallel_for(
        "tessera::batch_norm_backward_data_fixed", RangePolicy(0, rows * channels), KOKKOS_LAMBDA(const int64_t i) {
          const int64_t c = i % channels;
          dx(i) = stored<A>(gamma(c) * invstd(c) * value(dy(i)));
        });
    return;
  }
  const T inv_count = static_cast<T>(1.0 / count);
  Kokkos::parallel_for(
      "tessera::batch_norm_backward_data", RangePolicy(0, rows * channels), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t c = i % channels;
        const T xhat = (value(x(i)) - mean(c)) * invstd(c);
        dx(i) = stored<A>(gamma(c) * invstd(c) *
                          (value(dy(i)) - sums(c) * inv_count - xhat * sums(channels + c) * inv_count));
      });
}

#define TESSERA_INSTANTIATE_BATCH_NORM_KERNELS(T, A)                                                                \
  template void batch_norm_statistics<T, A>(const ActivationsIn<A>&, int64_t, int64_t, const ChannelSumWorkspace&,    \
                                            const Vector<T>&);                                                      \
  template void batch_norm_normalize<T, A>(const ActivationsIn<A>&, int64_t, int64_t, const ConstVector<T>&,          \
                                           const ConstVector<T>&, const ConstVector<T>&, const ConstVector<T>&,     \
                                           const ActivationsOut<A>&);                                                       \
  template void batch_norm_backward_statistics<T, A>(const ActivationsIn<A>&, const ActivationsIn<A>&, int64_t,         \
                                                     int64_t, const ConstVector<T>&, const ConstVector<T>&,         \
                                                     const ChannelSumWorkspace&, const Vector<T>&);                 \
  template void batch_norm_backward_data<T, A>(const ActivationsIn<A>&, const ActivationsIn<A>&, int64_t, int64_t,      \
                                               const ConstVector<T>&, const ConstVector<T>&, const ConstVector<T>&, \
                                               const ConstVector<T>&, double, bool, const ActivationsOut<A>&);

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
