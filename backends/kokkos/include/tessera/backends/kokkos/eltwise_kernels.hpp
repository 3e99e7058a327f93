#pragma once
// Pointwise activations, templated on the element type so tests can check them in double.
#include <cstdint>

#include "tessera/core/kokkos_compat.hpp"
#include "tessera/ops/eltwise.hpp"

namespace tessera::kokkos_backend {

// Here rather than in core/kokkos_compat.hpp, which every tensor user includes.
KOKKOS_INLINE_FUNCTION float tanh_of(float x) { return ::tanhf(x); }
KOKKOS_INLINE_FUNCTION double tanh_of(double x) { return ::tanh(x); }

/// f and f' of one activation, evaluated on device. For the piecewise ones x = 0 takes the
/// negative branch, so the derivative there is 0 for ReLU, alpha for LeakyReLU and alpha for
/// ELU (the one-sided values on the left, as PyTorch uses). tanh' = 1 − tanh², from x.
template <class T>
struct ActivationFunction {
  ops::EltwiseKind kind;
  T alpha;

  KOKKOS_INLINE_FUNCTION T value(T x) const {
    if (kind == ops::EltwiseKind::tanh) return tanh_of(x);
    if (kind == ops::EltwiseKind::scale) return alpha * x;
    if (x > T(0)) return x;
    switch (kind) {
      case ops::EltwiseKind::leaky_relu:
        return alpha * x;
      case ops::EltwiseKind::elu:
        return alpha * (math::exp(x) - T(1));
      default:
        return T(0);
    }
  }
  KOKKOS_INLINE_FUNCTION T derivative(T x) const {
    if (kind == ops::EltwiseKind::tanh) {
      const T t = tanh_of(x);
      return T(1) - t * t;
    }
    if (kind == ops::EltwiseKind::scale) return alpha;
    if (x > T(0)) return T(1);
    switch (kind) {
      case ops::EltwiseKind::leaky_relu:
        return alpha;
      case ops::EltwiseKind::elu:
        return alpha * math::exp(x);
      default:
        return T(0);
    }
  }
};

/// y = f(x) over the first n elements.
template <class T>
void eltwise_forward(const ActivationFunction<T>& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                     int64_t n, const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& y);

/// dx = f'(x)·dy over the first n elements.
template <class T>
void eltwise_backward(const ActivationFunction<T>& f, const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& x,
                      const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& dy, int64_t n,
                      const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& dx);

}  // namespace tessera::kokkos_backend
