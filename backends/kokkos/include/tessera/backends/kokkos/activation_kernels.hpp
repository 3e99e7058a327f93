#pragma once
// Pointwise activations: the rows of ops/activations.hpp as Kokkos kernels, templated on the
// element type so tests can check them in double.
#include <cstdint>

#include "tessera/core/element_type.hpp"
#include "tessera/core/kokkos_compat.hpp"
#include "tessera/ops/activations.hpp"

namespace tessera::kokkos_backend {

using ops::activations::tanh_of;

/// f and f' of the activation `kind` of the table `Rows`, evaluated on device.
template <class T, class Rows = ops::Activations>
struct ActivationFunction {
  ops::EltwiseKind kind;
  T alpha;

  KOKKOS_INLINE_FUNCTION T value(T x) const { return Rows::template value<T>(kind, x, alpha); }
  KOKKOS_INLINE_FUNCTION T derivative(T x) const { return Rows::template derivative<T>(kind, x, alpha); }
};

/// y = f(x) over the first n elements, for any f with value(x) on device.
template <class T, class F>
void activation_forward(const F& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x, int64_t n,
                        const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& y) {
  Kokkos::parallel_for(
      "tessera::eltwise_forward", RangePolicy(0, n), KOKKOS_LAMBDA(const int64_t i) { y(i) = f.value(x(i)); });
}

/// dx = f'(x)·dy over the first n elements, for any f with derivative(x) on device.
template <class T, class F>
void activation_backward(const F& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                         const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& dy, int64_t n,
                         const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& dx) {
  Kokkos::parallel_for(
      "tessera::eltwise_backward", RangePolicy(0, n),
      KOKKOS_LAMBDA(const int64_t i) { dx(i) = f.derivative(x(i)) * dy(i); });
}

/// The table's activations, compiled once here for float and double.
template <class T>
void eltwise_forward(const ActivationFunction<T>& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                     int64_t n, const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& y);
template <class T>
void eltwise_backward(const ActivationFunction<T>& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                      const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& dy, int64_t n,
                      const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& dx);

/// The same over 16-bit tensors (bf16 or fp16 bit patterns, `type` says which): each value
/// widened exactly, f or f'·dy computed in float, the result rounded once (as oneDNN's bf16
/// eltwise primitives compute).
void eltwise_forward_half(const ActivationFunction<float>& f, const DeviceView<const uint16_t>& x, int64_t n,
                          const DeviceView<uint16_t>& y, ElementType type);
void eltwise_backward_half(const ActivationFunction<float>& f, const DeviceView<const uint16_t>& x,
                           const DeviceView<const uint16_t>& dy, int64_t n, const DeviceView<uint16_t>& dx,
                           ElementType type);

}  // namespace tessera::kokkos_backend
