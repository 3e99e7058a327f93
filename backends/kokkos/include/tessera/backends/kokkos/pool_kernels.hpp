#pragma once
// Reference max and average pooling over channels-last activations (2D as depth 1), templated
// on the element type so tests can check the gradients in double; the PoolOp runs them in float.
// Backward passes are gathers (each input element sums over the windows that contain it), so
// they need no atomics and give the same result for any thread count.
#include <cstdint>

#include "tessera/core/kokkos_compat.hpp"
#include "tessera/ops/pool.hpp"

namespace tessera::kokkos_backend {

/// Per output element, the tap (kd·kH + kh)·kW + kw of its window that held the maximum.
using PoolArgmax = Kokkos::View<int32_t*, Kokkos::LayoutRight, MemSpace>;

/// y = max over each window; argmax (at least g.output_shape().numel() elements) records which
/// tap won, the first one on ties.
template <class T>
void max_pool_forward(const ops::PoolGeometry& g, const DeviceView<const T>& x, const DeviceView<T>& y,
                      const PoolArgmax& argmax);

/// dx[i] = Σ dy[o] over the windows o whose recorded maximum is element i. Overwrites dx.
template <class T>
void max_pool_backward(const ops::PoolGeometry& g, const DeviceView<const T>& dy, const PoolArgmax& argmax,
                       const DeviceView<T>& dx);

/// Max pooling of bf16 tensors (bit patterns) as max_pool_forward / max_pool_backward compute
/// it on their values widened to fp32 — the same maxima, taps and gradients, with no fp32 copy
/// — where the windows tile the input exactly and the memory is the host's. False (nothing
/// written) elsewhere: the caller then pools an fp32 copy.
bool max_pool_forward_bf16(const ops::PoolGeometry& g, const DeviceView<const uint16_t>& x,
                           const DeviceView<uint16_t>& y, const PoolArgmax& argmax);
bool max_pool_backward_bf16(const ops::PoolGeometry& g, const DeviceView<const uint16_t>& dy,
                            const PoolArgmax& argmax, const DeviceView<uint16_t>& dx);

/// y = mean over the in-bounds elements of each window (padding is not counted).
template <class T>
void avg_pool_forward(const ops::PoolGeometry& g, const DeviceView<const T>& x, const DeviceView<T>& y);

/// dx[i] = Σ dy[o] / count(o) over the windows o that contain element i. Overwrites dx.
template <class T>
void avg_pool_backward(const ops::PoolGeometry& g, const DeviceView<const T>& dy, const DeviceView<T>& dx);

}  // namespace tessera::kokkos_backend
