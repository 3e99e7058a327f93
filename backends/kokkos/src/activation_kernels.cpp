#include "tessera/backends/kokkos/activation_kernels.hpp"

#include "tessera/core/half_float.hpp"

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

void eltwise_forward_half(const ActivationFunction<float>& f, const DeviceView<const uint16_t>& x, int64_t n,
                          const DeviceView<uint16_t>& y, ElementType type) {
  Kokkos::parallel_for(
      "tessera::eltwise_forward_half", RangePolicy(0, n),
      KOKKOS_LAMBDA(const int64_t i) { y(i) = half_float::to_half(f.value(half_float::from_half(x(i), type)), type); });
}

void eltwise_backward_half(const ActivationFunction<float>& f, const DeviceView<const uint16_t>& x,
                           const DeviceView<const uint16_t>& dy, int64_t n, const DeviceView<uint16_t>& dx,
                           ElementType type) {
  Kokkos::parallel_for(
      "tessera::eltwise_backward_half", RangePolicy(0, n), KOKKOS_LAMBDA(const int64_t i) {
        const float g = f.derivative(half_float::from_half(x(i), type)) * half_float::from_half(dy(i), type);
        dx(i) = half_float::to_half(g, type);
      });
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
