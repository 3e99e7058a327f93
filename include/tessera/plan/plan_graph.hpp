#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/shape.hpp"
#include "tessera/layers/layer_traits.hpp"
#include "tessera/model/graph.hpp"
#include "tessera/model/model_spec.hpp"

namespace tessera::plan {

/// A sliding window a layer applies under a spatial split, and to which of its tensors: a
/// convolution or pooling reads a halo around its input block, a transposed convolution
/// writes one around its output block. The layer declares it (Layer::window).
using WindowUse = layers::SlidingWindow;

/// One layer as the performance model sees it: what it is, its whole shapes for the global
/// batch, and what decides its cost under each distribution.
struct PlanNode {
  std::string name, type;
  nlohmann::json config;  // the layer's spec entry, to make it again for timing
  std::optional<std::string> backend;
  std::vector<int> inputs;           // earlier nodes; model::Graph::kModelInput for the input
  std::vector<Shape> global_inputs;  // for the global batch
  Shape global_output;
  int64_t trainable = 0, buffers = 0;                 // whole-parameter element counts
  bool spatial_split = false, channel_split = false;  // what the layer accepts
  /// It mixes channels through weights: under a channel split it holds a shard and exchanges
  /// activations inside the group; other layers run on their slice.
  bool channel_mixing = false;
  /// The config key of its output channel count ("filters", "units"); empty when none.
  std::string output_channels_key;
  std::optional<WindowUse> window;
  /// Consumers in the graph.
  int consumers = 0;
  /// The type its activations (output, output gradient, halos, gathered channels) are held
  /// and moved in: the run's precision where the layer has it, else fp32.
  ElementType precision = ElementType::fp32;
  /// A convolution that the fusion pass would join with the max pool reading it (when both
  /// get the same distribution without a spatial split): then its output is never stored.
  bool fuses_with_consumer = false;
  /// An activation the graph moved after the max pool it preceded (same result on fewer
  /// elements): the move needs both in one distribution, so it runs in its input's.
  bool follows_input = false;
};

/// A model's layers for the planner: the graph the model would build, with the passes that
/// change what runs (activations moved after max pools) but without the conv+pool fusion,
/// which is a memory saving the cost model accounts itself; built for one rank, so it holds
/// whole shapes.
struct PlanGraph {
  Shape sample_shape;
  int64_t batch = 0;
  std::optional<std::string> backend;  // the model's
  std::vector<PlanNode> nodes;
  /// The output is per voxel (it keeps spatial dimensions): the last layer must then have the
  /// input's distribution, as the loss compares it with the targets block by block.
  bool per_voxel_output() const { return nodes.back().global_output.rank() >= 4; }
};

/// The plan graph of `spec` for a global batch of `batch` samples, its layers in `precision`
/// where they have it (as the model would build them). Throws ConfigError naming the JSON path
/// for a spec that does not build.
PlanGraph plan_graph(const model::ModelSpec& spec, int64_t batch, ElementType precision = ElementType::fp32);

}  // namespace tessera::plan
