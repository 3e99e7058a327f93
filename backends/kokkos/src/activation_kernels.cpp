#include "tessera/backends/kokkos/activation_kernels.hpp"

#include "tessera/backends/kokkos/activation_rows.hpp"
#include "tessera/backends/kokkos/storage_types.hpp"
#include "tessera/backends/kokkos/sweep.hpp"
#include "tessera/core/half_float.hpp"

namespace tessera::kokkos_backend {
namespace {

// Each kernel is instantiated per row of the table (activation_rows.hpp) and, for 16-bit
// tensors, per storage type, so that its loop holds no per-element choice and vectorises.

template <class Row, class T>
void forward_with(T alpha, const T* x, int64_t n, T* y) {
  for_each_index("tessera::eltwise_forward", n,
                 KOKKOS_LAMBDA(const int64_t i) { y[i] = Row::template value<T>(x[i], alpha); });
}

template <class Row, class T>
void backward_with(T alpha, const T* x, const T* dy, int64_t n, T* dx) {
  for_each_index("tessera::eltwise_backward", n,
                 KOKKOS_LAMBDA(const int64_t i) { dx[i] = Row::template derivative<T>(x[i], alpha) * dy[i]; });
}

template <class Row, class Half>
void forward_half_with(float alpha, const uint16_t* x, int64_t n, uint16_t* y) {
  for_each_index("tessera::eltwise_forward_half", n, KOKKOS_LAMBDA(const int64_t i) {
    y[i] = Half::narrow(Row::template value<float>(Half::widen(x[i]), alpha));
  });
}

template <class Row, class Half>
void backward_half_with(float alpha, const uint16_t* x, const uint16_t* dy, int64_t n, uint16_t* dx) {
  for_each_index("tessera::eltwise_backward_half", n, KOKKOS_LAMBDA(const int64_t i) {
    dx[i] = Half::narrow(Row::template derivative<float>(Half::widen(x[i]), alpha) * Half::widen(dy[i]));
  });
}

}  // namespace

template <class T>
void eltwise_forward(const ActivationFunction<T>& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                     int64_t n, const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& y) {
  with_activation_row(true, f.kind,
                      [&](auto row) { forward_with<decltype(row), T>(f.alpha, x.data(), n, y.data()); });
}

template <class T>
void eltwise_backward(const ActivationFunction<T>& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                      const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& dy, int64_t n,
                      const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& dx) {
  with_activation_row(true, f.kind, [&](auto row) {
    backward_with<decltype(row), T>(f.alpha, x.data(), dy.data(), n, dx.data());
  });
}

void eltwise_forward_half(const ActivationFunction<float>& f, const DeviceView<const uint16_t>& x, int64_t n,
                          const DeviceView<uint16_t>& y, ElementType type) {
  with_activation_row(true, f.kind, [&](auto row) {
    if (type == ElementType::bf16)
      forward_half_with<decltype(row), Bf16>(f.alpha, x.data(), n, y.data());
    else
      forward_half_with<decltype(row), Fp16>(f.alpha, x.data(), n, y.data());
  });
}

void eltwise_backward_half(const ActivationFunction<float>& f, const DeviceView<const uint16_t>& x,
                           const DeviceView<const uint16_t>& dy, int64_t n, const DeviceView<uint16_t>& dx,
                           ElementType type) {
  with_activation_row(true, f.kind, [&](auto row) {
    if (type == ElementType::bf16)
      backward_half_with<decltype(row), Bf16>(f.alpha, x.data(), dy.data(), n, dx.data());
    else
      backward_half_with<decltype(row), Fp16>(f.alpha, x.data(), dy.data(), n, dx.data());
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
