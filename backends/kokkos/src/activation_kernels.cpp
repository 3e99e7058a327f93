#include "tessera/backends/kokkos/activation_kernels.hpp"

namespace tessera::kokkos_backend {

template <class T>
void eltwise_forward(const ActivationFunction<T>& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                     int64_t n, const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& y) {
  activation_forward<T>(f, x, n, y);
}

template <class T>
void eltwise_backward(const ActivationFunction<T>& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                      const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& dy, int64_t n,
                      const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& dx) {
  activation_backward<T>(f, x, dy, n, dx);
}

#define TESSERA_INSTANTIATE_ACTIVATION_KERNELS(T)                                                          \
  template void eltwise_forward<T>(const ActivationFunction<T>&,                                           \
                                   const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>&, int64_t,  \
                                   const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>&);                \
  template void eltwise_backward<T>(const ActivationFunction<T>&,                                          \
                                    const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>&,          \
                                    const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>&, int64_t, \
                                    const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>&);

TESSERA_INSTANTIATE_ACTIVATION_KERNELS(float)
TESSERA_INSTANTIATE_ACTIVATION_KERNELS(double)
#undef TESSERA_INSTANTIATE_ACTIVATION_KERNELS

}  // namespace tessera::kokkos_backend
