#include "tessera/plan/plan_graph.hpp"

#include <map>

#include "tessera/model/graph_builder.hpp"
#include "tessera/model/passes/passes.hpp"

namespace tessera::plan {
namespace {

/// The graph the model would build on one rank with every layer on it (whole shapes, and the
/// parameters each layer declares whole), after the passes but the fusion.
model::Graph serial_graph(const model::ModelSpec& spec, ElementType precision) {
  model::ModelSpec serial = spec;
  serial.distribution.reset();
  for (auto& l : serial.layers) l.distribution.reset();
  model::BuildOptions options;
  options.group = parallel::Communicator::self();
  options.precision = precision;
  model::Graph graph = model::build_graph(serial, options);
  // The fusing passes merge two layers into one node: the planner keeps one node per layer of
  // the spec, which it chooses a distribution for.
  for (const auto& pass : model::passes::all())
    if (std::string(pass.name) != "fuse_conv_max_pool" && std::string(pass.name) != "fuse_batch_norm_activation")
      pass.run(graph);
  return graph;
}

/// Node `i` of `graph` as the performance model sees it, with what its layer declares.
PlanNode plan_node(const model::Graph& graph, size_t i, const model::LayerSpec& ls, int64_t batch) {
  const model::GraphNode& n = graph.nodes[i];
  const layers::Layer& layer = *n.layer;
  const layers::LayerTraits traits = layer.traits();
  PlanNode p;
  p.name = layer.name();
  p.type = layer.type();
  p.config = ls.config;
  p.backend = ls.backend;
  p.inputs = n.inputs;
  p.global_inputs = graph.global_inputs(i, batch);
  p.global_output = n.global_output;
  p.global_output[0] = batch;
  p.trainable = n.parameters.trainable;
  p.buffers = n.parameters.buffers;
  p.spatial_split = traits.spatial_split;
  p.channel_split = traits.channel_split;
  p.channel_mixing = traits.mixes_channels;
  if (traits.output_channels_key) p.output_channels_key = traits.output_channels_key;
  p.consumers = n.consumers;
  p.precision = n.context.precision;
  if (p.global_inputs.size() == 1 && p.global_inputs[0].rank() >= 4) {
    Shape one = p.global_inputs[0];
    one[0] = 1;
    p.window = layer.window(one);
  }
  return p;
}

/// Marks the activations the pass moved after their pool: in the spec they come before the
/// layer they now read.
void mark_moved_activations(const model::ModelSpec& spec, PlanGraph& g) {
  std::map<std::string, size_t> spec_index;
  for (size_t k = 0; k < spec.layers.size(); ++k) spec_index[spec.layers[k].name] = k;
  for (auto& p : g.nodes)
    if (p.inputs.size() == 1 && p.inputs[0] != model::Graph::kModelInput &&
        spec_index.at(p.name) < spec_index.at(g.nodes[static_cast<size_t>(p.inputs[0])].name))
      p.follows_input = true;
}

/// The fusion pass's condition, asked of the layers themselves: a producer whose only
/// consumer is a max pool and that offers a fused layer for one sample.
void mark_fusions(const model::ModelSpec& spec, const model::Graph& graph, PlanGraph& g) {
  if (!spec.fuse_conv_max_pool) return;
  for (size_t j = 0; j < graph.nodes.size(); ++j) {
    const model::GraphNode& pool = graph.nodes[j];
    const layers::PoolOptions* opts = pool.layer->max_pool_options();
    if (!opts || pool.inputs.size() != 1 || pool.inputs[0] == model::Graph::kModelInput) continue;
    const size_t i = static_cast<size_t>(pool.inputs[0]);
    if (graph.nodes[i].consumers != 1) continue;
    if (graph.nodes[i].layer->fused_with_max_pool(pool.layer->name(), *opts, graph.global_input(j, 0, 1)))
      g.nodes[i].fuses_with_consumer = true;
  }
}

}  // namespace

PlanGraph plan_graph(const model::ModelSpec& spec, int64_t batch, ElementType precision) {
  const model::Graph graph = serial_graph(spec, precision);
  std::map<std::string, const model::LayerSpec*> spec_of;
  for (const auto& l : spec.layers) spec_of[l.name] = &l;
  PlanGraph g;
  g.sample_shape = graph.sample_shape;
  g.batch = batch;
  g.backend = spec.backend;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    g.nodes.push_back(plan_node(graph, i, *spec_of.at(graph.nodes[i].layer->name()), batch));
  mark_moved_activations(spec, g);
  mark_fusions(spec, graph, g);
  return g;
}

}  // namespace tessera::plan
