#pragma once
// The activation table's rows as compile-time types for kernels: a kernel instantiated for one
// row evaluates f and f' inline, with no per-element choice of kind, so that its loop
// vectorises. with_activation_row picks the instantiation at run time, once per call.
#include <utility>

#include "tessera/core/error.hpp"
#include "tessera/core/kokkos_compat.hpp"
#include "tessera/ops/activations.hpp"

namespace tessera::kokkos_backend {

/// The identity, for a kernel with no activation in its epilogue.
struct NoActivation {
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x, T /*a*/) {
    return x;
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T /*x*/, T /*a*/) {
    return T(1);
  }
};

/// Calls f(Row{}) for the row of `kind` (ops::Activations), or f(NoActivation{}) when
/// `active` is false. Host code; f is typically a generic lambda calling a kernel template.
template <class F>
void with_activation_row(bool active, ops::EltwiseKind kind, F&& f) {
  if (!active) {
    f(NoActivation{});
    return;
  }
  bool found = false;
  ops::Activations::for_each([&](auto row) {
    if (!found && decltype(row)::kind == kind) {
      found = true;
      f(row);
    }
  });
  if (!found) throw Error("no activation row for kind " + std::to_string(static_cast<int>(kind)));
}

}  // namespace tessera::kokkos_backend
