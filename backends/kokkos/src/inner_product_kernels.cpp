#include "tessera/backends/kokkos/inner_product_kernels.hpp"

#include <KokkosBlas3_gemm.hpp>

#include "blas_threads.hpp"

namespace tessera::kokkos_backend {

template <class T>
void inner_product_forward(const ConstMatrixView<T>& x, const ConstMatrixView<T>& w,
                           const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& bias, const MatrixView<T>& y) {
  keep_blas_on_calling_thread();
  KokkosBlas::gemm("N", "T", T(1), x, w, T(0), y);
  if (bias.data() == nullptr) return;
  const int64_t out = static_cast<int64_t>(y.extent(1));
  Kokkos::parallel_for(
      "tessera::inner_product_bias", MDPolicy<2>({0, 0}, {static_cast<int64_t>(y.extent(0)), out}),
      KOKKOS_LAMBDA(const int64_t n, const int64_t o) { y(n, o) += bias(o); });
}

template <class T>
void inner_product_backward_data(const ConstMatrixView<T>& dy, const ConstMatrixView<T>& w, const MatrixView<T>& dx) {
  keep_blas_on_calling_thread();
  KokkosBlas::gemm("N", "N", T(1), dy, w, T(0), dx);
}

template <class T>
void inner_product_backward_weights(const ConstMatrixView<T>& x, const ConstMatrixView<T>& dy, const MatrixView<T>& dw,
                                    const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& dbias) {
  keep_blas_on_calling_thread();
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

#define TESSERA_INSTANTIATE_INNER_PRODUCT_KERNELS(T)                                                    \
  template void inner_product_forward<T>(const ConstMatrixView<T>&, const ConstMatrixView<T>&,          \
                                         const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>&,  \
                                         const MatrixView<T>&);                                         \
  template void inner_product_backward_data<T>(const ConstMatrixView<T>&, const ConstMatrixView<T>&,    \
                                               const MatrixView<T>&);                                   \
  template void inner_product_backward_weights<T>(const ConstMatrixView<T>&, const ConstMatrixView<T>&, \
                                                  const MatrixView<T>&,                                 \
                                                  const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>&);

TESSERA_INSTANTIATE_INNER_PRODUCT_KERNELS(float)
TESSERA_INSTANTIATE_INNER_PRODUCT_KERNELS(double)
#undef TESSERA_INSTANTIATE_INNER_PRODUCT_KERNELS

}  // namespace tessera::kokkos_backend
