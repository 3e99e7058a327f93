#pragma once
// The gradient of max pooling over channels-last tensors as a gather that needs only the
// forward's input and output (no argmax recorded), in fp32, bf16 or fp16: the cuDNN backend's
// max-pooling backward. cudnnPoolingBackward took 10.8 ms (bf16) and 18.3 ms (fp32) for
// cosmoflow-small's first pool (4x32x128^3 in, 2x2x2 windows) on an H200, a quarter of a bf16
// training step, where the pass moves about 1 GB: a memory-bound gather does it near bandwidth.
//
// dx[i] = Σ over the windows w that cover input element i and whose first maximum (in
// depth, height, width order, as the Kokkos and oneDNN kernels pick it) is i, of dy[w]. One
// thread per input element: each writes its own dx, so there are no atomics and the result
// repeats bit for bit; only an element equal to its window's maximum scans the window.
#include "tessera/core/tensor.hpp"
#include "tessera/ops/pool.hpp"

namespace tessera::kokkos_backend {

/// dx = the gradient of max pooling `g` from the forward input x, its output y and dy
/// (overwrites dx). All four of g.type (fp32, bf16 or fp16); sums in fp32, rounded once.
void max_pool_backward_gather(const ops::PoolGeometry& g, const Tensor& x, const Tensor& y, const Tensor& dy,
                       const Tensor& dx);

}  // namespace tessera::kokkos_backend
