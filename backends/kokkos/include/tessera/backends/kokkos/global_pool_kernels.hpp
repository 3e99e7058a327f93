#pragma once
// Global average pooling over channels-last activations: every spatial position of a sample
// reduced to one value per channel. A memory-bound reduction with no vendor op to prefer, so
// layers call these kernels directly on every backend.
#include "tessera/core/tensor.hpp"

namespace tessera::kokkos_backend {

/// y[n, c] = scale · Σ_s x[n, s, c] for x [N, ..., C] (any spatial rank) and y [N, C]; scale
/// 1/S averages, and a rank holding a block of each sample gives 1/(whole S) and sums the
/// blocks' results.
void global_sum_pool_forward(const Tensor& x, float scale, const Tensor& y);
/// dx[n, s, c] = scale · dy[n, c]. Overwrites dx.
void global_sum_pool_backward(const Tensor& dy, float scale, const Tensor& dx);

}  // namespace tessera::kokkos_backend
