#include "tessera/backends/kokkos/global_pool_kernels.hpp"

#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend {
namespace {

/// S, the positions per sample, after checking that x [N, ..., C] and y [N, C] agree.
int64_t positions(const Tensor& x, const Tensor& y, const char* op) {
  const Shape& xs = x.shape();
  const Shape& ys = y.shape();
  require_shape(xs.rank() >= 3 && ys.rank() == 2 && ys[0] == xs[0] && ys[1] == xs[xs.rank() - 1],
                std::string(op) + ": activation " + xs.str() + " and features " + ys.str() +
                    " do not fit; expected [N, ..., C] and [N, C]");
  return xs[0] * xs[xs.rank() - 1] == 0 ? 0 : xs.numel() / (xs[0] * xs[xs.rank() - 1]);
}

}  // namespace

void global_sum_pool_forward(const Tensor& x, float scale, const Tensor& y) {
  const int64_t s = positions(x, y, "global_sum_pool_forward");
  const int64_t c = y.shape()[1];
  const auto xv = x.view();
  const auto yv = y.view();
  // One thread per (sample, channel): the sum over positions stays in order, so the result
  // does not depend on the thread count.
  Kokkos::parallel_for(
      "tessera::global_sum_pool_forward", RangePolicy(0, y.numel()), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t n = i / c, ch = i % c;
        const int64_t base = n * s * c + ch;
        float acc = 0.0f;
        for (int64_t p = 0; p < s; ++p) acc += xv(base + p * c);
        yv(i) = scale * acc;
      });
}

void global_sum_pool_backward(const Tensor& dy, float scale, const Tensor& dx) {
  const int64_t s = positions(dx, dy, "global_sum_pool_backward");
  const int64_t c = dy.shape()[1];
  const auto dyv = dy.view();
  const auto dxv = dx.view();
  Kokkos::parallel_for(
      "tessera::global_sum_pool_backward", RangePolicy(0, dx.numel()), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t ch = i % c, n = i / (s * c);
        dxv(i) = scale * dyv(n * c + ch);
      });
}

}  // namespace tessera::kokkos_backend
