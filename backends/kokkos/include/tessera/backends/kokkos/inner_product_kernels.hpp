#pragma once
// Inner product (fully connected) kernels, y[N, out] = x[N, in]·wᵀ + b with w [out, in],
// templated on the element type so tests can check them in double. The matrix products go
// through Kokkos Kernels' gemm (a vendor BLAS where Kokkos Kernels has one as a TPL).
#include <KokkosBlas3_gemm.hpp>
#include <cstdint>

#include "tessera/core/kokkos_compat.hpp"

namespace tessera::kokkos_backend {

template <class T>
using ConstMatrixView = Kokkos::View<const T**, Kokkos::LayoutRight, MemSpace>;
template <class T>
using MatrixView = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;

/// y = x·wᵀ + bias (bias may be empty).
template <class T>
void inner_product_forward(const ConstMatrixView<T>& x, const ConstMatrixView<T>& w,
                           const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& bias, const MatrixView<T>& y) {
  KokkosBlas::gemm("N", "T", T(1), x, w, T(0), y);
  if (bias.data() == nullptr) return;
  const int64_t out = static_cast<int64_t>(y.extent(1));
  Kokkos::parallel_for(
      "tessera::inner_product_bias", MDPolicy<2>({0, 0}, {static_cast<int64_t>(y.extent(0)), out}),
      KOKKOS_LAMBDA(const int64_t n, const int64_t o) { y(n, o) += bias(o); });
}

/// dx = dy·w.
template <class T>
void inner_product_backward_data(const ConstMatrixView<T>& dy, const ConstMatrixView<T>& w, const MatrixView<T>& dx) {
  KokkosBlas::gemm("N", "N", T(1), dy, w, T(0), dx);
}

/// dw = dyᵀ·x and dbias = Σ_n dy (dbias may be empty); both overwritten.
template <class T>
void inner_product_backward_weights(const ConstMatrixView<T>& x, const ConstMatrixView<T>& dy, const MatrixView<T>& dw,
                                    const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& dbias) {
  KokkosBlas::gemm("T", "N", T(1), dy, x, T(0), dw);
  if (dbias.data() == nullptr) return;
  const int64_t batch = static_cast<int64_t>(dy.extent(0));
  // One thread per output feature summing down its column: a gather, so no atomics and a
  // fixed order.
  Kokkos::parallel_for(
      "tessera::inner_product_bias_grad", RangePolicy(0, static_cast<int64_t>(dy.extent(1))),
      KOKKOS_LAMBDA(const int64_t o) {
        double s = 0.0;
        for (int64_t n = 0; n < batch; ++n) s += static_cast<double>(dy(n, o));
        dbias(o) = static_cast<T>(s);
      });
}

}  // namespace tessera::kokkos_backend
