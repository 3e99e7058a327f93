#pragma once
// Inner product (fully connected) kernels, y[N, out] = x[N, in]·wᵀ + b with w [out, in],
// templated on the element type so tests can check them in double. The matrix products go
// through Kokkos Kernels' gemm (a vendor BLAS where Kokkos Kernels has one as a TPL).
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
                           const Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace>& bias, const MatrixView<T>& y);

/// dx = dy·w.
template <class T>
void inner_product_backward_data(const ConstMatrixView<T>& dy, const ConstMatrixView<T>& w, const MatrixView<T>& dx);

/// dw = dyᵀ·x and dbias = Σ_n dy (dbias may be empty); both overwritten.
template <class T>
void inner_product_backward_weights(const ConstMatrixView<T>& x, const ConstMatrixView<T>& dy, const MatrixView<T>& dw,
                                    const Kokkos::View<T*, Kokkos::LayoutRight, MemSpace>& dbias);

}  // namespace tessera::kokkos_backend
