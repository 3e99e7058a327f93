#pragma once
// The Kokkos backend's convolutions on the host, on every thread: output (or, for the input
// gradient, input) positions cut into cache-sized tiles that the threads take one at a time,
// each tile's column matrix built by its thread and multiplied on that thread: fp32 by
// host_sgemm (Tessera's own, compiled per instruction set), double by the host's Fortran BLAS
// (OpenBLAS told to stay on its caller, blas_threads.hpp; calls from several threads at once are
// what it supports then). Used where the memory is the host's (and, for double, Kokkos Kernels
// has its BLAS TPL); conv_kernels.cpp falls back to its one-gemm-at-a-time path elsewhere.
#include <cstdint>

#include "tessera/ops/conv.hpp"

namespace tessera::kokkos_backend::host_tiles {

/// Whether this build has the host tile path for T: host memory, and for double a Fortran BLAS
/// (fp32 runs on host_sgemm).
template <class T>
bool available();

/// The tile plan of a geometry: positions per tile and tiles (fixed by the geometry, never by
/// the thread count, so that the sums, and so the bits, are the same on any number of threads;
/// backward_weights groups its tiles by the sizes alone too).
struct TilePlan {
  int64_t rows = 0, tiles = 0;
};
/// `max_rows` caps a tile (the workspace's budget: tests pass a small one to get many tiles).
TilePlan plan(int64_t positions, int64_t columns, int64_t max_rows);

/// y = conv(x, w) + bias (bias may be null). Any stride, padding and dilation.
template <class T>
void forward(const ops::ConvGeometry& g, const T* x, const T* w, const T* bias, T* y, int64_t max_rows);

/// Whether backward_data below handles `g`: stride 1 on every axis, where the input gradient is
/// itself a convolution of the output gradient (a gather: every input element's tile owns it).
bool gathers_input_gradient(const ops::ConvGeometry& g);
/// dx = ∂(Σ y·dy)/∂x, overwriting dx; stride 1 only (gathers_input_gradient).
template <class T>
void backward_data(const ops::ConvGeometry& g, const T* dy, const T* w, T* dx, int64_t max_rows);

/// dw = ∂(Σ y·dy)/∂w, overwriting dw: each group of tiles sums into its own partial, the
/// partials then added in group order.
template <class T>
void backward_weights(const ops::ConvGeometry& g, const T* x, const T* dy, T* dw, int64_t max_rows);

}  // namespace tessera::kokkos_backend::host_tiles
