#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tessera/core/element_type.hpp"
#include "tessera/bench/model_ops.hpp"
#include "tessera/ops/backend.hpp"

namespace tessera::bench {

/// One direction of one op on one backend: its median time and the work it did.
struct OpTiming {
  std::string layer, op_class, shape, backend;  // op_class: "conv_forward", "pool_backward", ...
  bool supported = true;
  std::string why;     // why the backend declined the op (when not supported)
  double seconds = 0;  // median of the timed repetitions
  double flops = 0;    // arithmetic of the op (nominal for the memory-bound kinds)
  double bytes = 0;    // the tensors the op must read and write once each
  ElementType type = ElementType::fp32;  // of the op's activations
};

/// How ops are timed: `warmup` untimed calls (primitive creation, workspaces, caches), then
/// the median of `reps` calls, each fenced.
struct TimingOptions {
  int warmup = 1;
  int reps = 5;
};

/// The type of a case's activations (its geometry's, or its layer's precision).
ElementType case_type(const OpCase& op);

/// The op classes of an op kind, in the order time_op_case returns them.
std::vector<std::string> op_classes(ops::OpKind kind);
/// The op classes of a case, in the order time_op_case returns them: those of its op kind,
/// "conv_transpose_*" for a transposed convolution, "<layer type>_forward/_backward" (without
/// the 2d/3d) for a layer that runs its own kernels.
std::vector<std::string> op_classes(const OpCase& op);

/// Times every direction of `op` on `backend` (forward, backward-data, backward-weights, or
/// forward and backward), on tensors of realistic random values. A backend that declines the
/// op gives entries with supported = false and its reason. A layer that runs its own Kokkos
/// kernels is made from its spec and timed whole, with `backend`'s op factory: it runs the
/// same kernels under every backend.
std::vector<OpTiming> time_op_case(const OpCase& op, ops::Backend& backend, const TimingOptions& options);

/// The median seconds of `reps` calls of `f` after `warmup` calls, each followed by a fence.
double median_seconds(const TimingOptions& options, const std::function<void()>& f);

}  // namespace tessera::bench
