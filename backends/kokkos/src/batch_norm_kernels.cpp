#include "tessera/backends/kokkos/batch_norm_kernels.hpp"

namespace tessera::kokkos_backend {

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
