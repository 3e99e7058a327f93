#pragma once
// What the planner, the bench op list and the graph passes ask of a layer, declared by each
// layer type in its own file (Layer::traits, Layer::window, Layer::backend_op) instead of
// inferred from its C++ type or its config keys elsewhere.
#include <cstdint>
#include <vector>

#include "tessera/layers/haloed_input.hpp"
#include "tessera/ops/backend.hpp"

namespace tessera::layers {


/// The window a layer slides when split in space, so that it exchanges halos: over its input,
/// or for a transposed convolution over its output (`on_output`).
struct SlidingWindow {
  Window window;
  bool on_output = false;
};

/// The properties of a layer that code outside the layer decides by.
struct LayerTraits {
  /// Computes the same result with each sample split over depth, height and width.
  bool spatial_split = false;
  /// Computes the same result with its channels split over the channel group of its grid.
  bool channel_split = false;
  /// Each output channel reads every input channel (a channel split communicates).
  bool mixes_channels = false;
  /// The config key holding the output channel count ("filters", "units"): the layer computing
  /// 1/k of its output channels is its config with this key divided by k. Null when none.
  const char* output_channels_key = nullptr;
  /// A pointwise, monotone non-decreasing map f: max-pool(f(x)) = f(max-pool(x)) and the
  /// gradient reaches the same element either way, so it may run after a following max pool.
  bool commutes_with_max_pool = false;
  /// Learns by a local rule in the training forward passes of local-learning steps
  /// (StepInfo::local_learning), not from gradients; a run trains it only in its
  /// local-learning epochs ("local_learning" in the run config).
  bool learns_locally = false;
  /// The backend ops it runs; empty for layers whose kernels are their own Kokkos code.
  std::vector<ops::OpKind> op_kinds;
  /// The element types it computes in: its inputs, output and their gradients are of the
  /// type it runs in (parameters stay fp32). A run asking for a type a layer lacks runs that
  /// layer in fp32, with conversions at its edges (docs/precision.md).
  std::vector<ElementType> precisions{ElementType::fp32};
};

/// Whether a layer with traits `t` computes in `type`.
inline bool runs_in(const LayerTraits& t, ElementType type) {
  for (ElementType p : t.precisions)
    if (p == type) return true;
  return false;
}

/// The backend op a layer runs at the shapes it is given: the geometry of its kind (the
/// others stay default). What bench times for the layer.
struct LayerOp {
  ops::OpKind kind = ops::OpKind::conv;
  /// A transposed convolution: `conv` is its adjoint convolution (input: the layer's output),
  /// and it adds a bias (`bias`) with Kokkos kernels of its own.
  bool adjoint_conv = false;
  bool bias = false;
  ops::ConvGeometry conv;
  ops::PoolGeometry pool;
  ops::EltwiseDesc eltwise;
  int64_t eltwise_elements = 0;
  ops::BatchNormGeometry batch_norm;
  ops::InnerProductGeometry inner_product;
};

}  // namespace tessera::layers
