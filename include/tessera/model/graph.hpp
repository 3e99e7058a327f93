#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/shape.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/model/parameter_counter.hpp"
#include "tessera/parallel/process_grid.hpp"
#include "tessera/registry/op_factory.hpp"

namespace tessera::model {

/// Elements of parameters one rank holds for one node: trainable ones and buffers, and the
/// blocks its sharded weights gather (held from forward to backward, then their gradient).
struct ParameterCount {
  int64_t trainable = 0, buffers = 0, gathered = 0;
};

/// One layer of a graph, where it runs and what it reads.
struct GraphNode {
  /// Made but not set up: a pass may still replace it.
  std::unique_ptr<layers::Layer> layer;
  /// What the model sets the layer up with: its grid, op factory, seed.
  layers::LayerContext context;
  std::string spec_path;    // where the spec defines it (for errors)
  std::vector<int> inputs;  // node indices; Graph::kModelInput is the model input
  int consumers = 0;
  Shape global_output;  // the whole output for a batch of one sample
  ParameterCount parameters;

  const parallel::ProcessGrid& grid() const { return context.grid; }
};

/// What one rank holds of a model for one global batch.
struct Footprint {
  struct Node {
    std::string layer;
    int64_t activation_bytes = 0;  // this rank's block of the node's output
    ParameterCount parameters;
  };
  std::vector<Node> nodes;
  /// The nodes' outputs; training holds a gradient as large beside most of them.
  int64_t activation_bytes = 0;
  ParameterCount parameters;
  /// What the ParameterStore allocates: values and gradients of the trainable parameters,
  /// and the buffers.
  int64_t parameter_bytes = 0;
};

/// A model's layers as a directed acyclic graph in execution order (each node reads only
/// earlier ones), with Redistribute nodes where distributions change. build_graph() makes it
/// from a ModelSpec, graph passes rewrite it, a Model sets it up and runs it. Until then it
/// holds no tensor, so it is cheap to build for layouts that are only being weighed.
struct Graph {
  static constexpr int kModelInput = -1;

  Shape sample_shape;  // per sample, channels-last
  parallel::ProcessGrid input_grid;
  /// The most sample groups of any distribution: a global batch needs a sample for each.
  int64_t min_batch = 1;
  /// How batches split over the ranks; every grid of the graph holds it.
  std::shared_ptr<parallel::SampleShares> shares;
  /// How spatial extents split over the ranks (align_spatial_splits); every grid holds it.
  std::shared_ptr<parallel::SpatialAlignment> alignment;
  uint64_t seed = 0;
  layers::InitScheme init = layers::InitScheme::he_normal;
  bool fuse_conv_max_pool = true;          // the spec's switches for the passes of those names
  bool fuse_batch_norm_activation = true;
  std::string layers_path;         // "$.model.layers", for errors that concern the whole graph
  std::vector<GraphNode> nodes;
  std::vector<std::unique_ptr<registry::OpFactory>> factories;  // the nodes' op factories
  /// What the layers declared at build. They point into it until the model sets them up.
  std::unique_ptr<ParameterCounter> declared;

  /// The whole model input for a global batch of `batch` samples.
  Shape input_shape(int64_t batch) const;
  /// The whole shape of input `k` of node `node` for a global batch.
  Shape global_input(size_t node, size_t k, int64_t batch) const;
  /// The whole shapes of all of node `node`'s inputs for a global batch.
  std::vector<Shape> global_inputs(size_t node, int64_t batch) const;
  /// This rank's blocks of node `node`'s inputs for a global batch (each as its producer
  /// holds it). Throws ShapeError when a dimension does not split.
  std::vector<Shape> local_inputs(size_t node, int64_t batch) const;
  /// Throws ShapeError when `batch` leaves a sample group of some distribution without samples.
  void check_batch(int64_t batch) const;
  /// This rank's activations and parameters for a global batch; throws ShapeError as above.
  Footprint footprint(int64_t batch) const;
  /// Removes node `node`; whatever read it reads node `replacement` (an earlier one) instead.
  void remove(size_t node, int replacement);
};

}  // namespace tessera::model
