#include "tessera/backends/kokkos/eltwise_kernels.hpp"

namespace tessera::kokkos_backend {

template <class T>
void eltwise_forward(const ActivationFunction<T>& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                     int64_t n, const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& y) {
  Kokkos::parallel_for(
      "tessera::eltwise_forward", RangePolicy(0, n), KOKKOS_LAMBDA(const int64_t i) { y(i) = f.value(x(i)); });
}

template <class T>
void eltwise_backward(const ActivationFunction<T>& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                      const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& dy, int64_t n,
                      const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& dx) {
  Kokkos::parallel_for(
      "tessera::eltwise_backward", RangePolicy(0, n),
      KOKKOS_LAMBDA(const int64_t i) { dx(i) = f.derivative(x(i)) * dy(i); });
}

#define TESSERA_INSTANTIATE_ELTWISE_KERNELS(T)                                                             \
  template void eltwise_forward<T>(const ActivationFunction<T>&,                                           \
                                   const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>&, int64_t,  \
                                   const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>&);                \
  template void eltwise_backward<T>(const ActivationFunction<T>&,                                          \
                                    const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>&,          \
                                    const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>&, int64_t, \
                                    const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>&);

TESSERA_INSTANTIATE_ELTWISE_KERNELS(float)
TESSERA_INSTANTIATE_ELTWISE_KERNELS(double)
#undef TESSERA_INSTANTIATE_ELTWISE_KERNELS

}  // namespace tessera::kokkos_backend
