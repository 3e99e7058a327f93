#include "tessera/plan/plan_graph.hpp"

#include <map>

#include "tessera/layers/conv.hpp"
#include "tessera/layers/conv_transpose.hpp"
#include "tessera/layers/pool.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/passes/passes.hpp"

namespace tessera::plan {
namespace {

/// The window a layer applies when split in space. The sliding-window layers are the ones
/// that exchange halos; a new one needs its window here.
std::optional<WindowUse> window_of(const layers::Layer& layer, const Shape& input) {
  if (const auto* conv = dynamic_cast<const layers::Conv*>(&layer)) {
    const ops::ConvGeometry g = conv->geometry(input);
    return WindowUse{layers::Window{g.kernel, g.stride, g.padding, g.dilation}, false};
  }
  if (const auto* pool = dynamic_cast<const layers::Pool*>(&layer)) {
    const ops::PoolGeometry g = pool->geometry(input);
    return WindowUse{layers::Window{g.kernel, g.stride, g.padding, {1, 1, 1}}, false};
  }
  if (const auto* up = dynamic_cast<const layers::ConvTranspose*>(&layer)) {
    const auto& o = up->options();
    std::array<int64_t, 3> kernel = o.kernel, stride = o.stride, padding = o.padding;
    if (o.spatial_rank == 2) kernel[0] = stride[0] = 1, padding[0] = 0;
    return WindowUse{layers::Window{kernel, stride, padding, {1, 1, 1}}, true};
  }
  return std::nullopt;
}

}  // namespace

PlanGraph plan_graph(const model::ModelSpec& spec, int64_t batch) {
  // One rank, every layer on it: whole shapes, and the parameters each layer declares whole.
  model::ModelSpec serial = spec;
  serial.distribution.reset();
  for (auto& l : serial.layers) l.distribution.reset();
  model::BuildOptions options;
  options.group = parallel::Communicator::self();
  model::Graph graph = model::build_graph(serial, options);
  for (const auto& pass : model::passes::all())
    if (std::string(pass.name) != "fuse_conv_max_pool") pass.run(graph);

  std::map<std::string, const model::LayerSpec*> spec_of;
  for (const auto& l : spec.layers) spec_of[l.name] = &l;
  PlanGraph g;
  g.sample_shape = graph.sample_shape;
  g.batch = batch;
  g.backend = spec.backend;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const model::GraphNode& n = graph.nodes[i];
    const layers::Layer& layer = *n.layer;
    PlanNode p;
    p.name = layer.name();
    p.type = layer.type();
    const model::LayerSpec& ls = *spec_of.at(p.name);
    p.config = ls.config;
    p.backend = ls.backend;
    p.inputs = n.inputs;
    for (size_t k = 0; k < n.inputs.size(); ++k) p.global_inputs.push_back(graph.global_input(i, k, batch));
    p.global_output = n.global_output;
    p.global_output[0] = batch;
    p.trainable = n.parameters.trainable;
    p.buffers = n.parameters.buffers;
    p.spatial_split = layer.supports_spatial_split();
    p.channel_split = layer.supports_channel_split();
    p.channel_mixing = ls.config.contains("filters") || ls.config.contains("units");
    p.consumers = n.consumers;
    if (p.global_inputs.size() == 1 && p.global_inputs[0].rank() >= 4) {
      Shape one = p.global_inputs[0];
      one[0] = 1;
      p.window = window_of(layer, one);
    }
    g.nodes.push_back(std::move(p));
  }
  // Activations the pass moved after their pool: in the spec they come before the layer
  // they now read.
  std::map<std::string, size_t> spec_index;
  for (size_t k = 0; k < spec.layers.size(); ++k) spec_index[spec.layers[k].name] = k;
  for (auto& p : g.nodes)
    if (p.inputs.size() == 1 && p.inputs[0] != model::Graph::kModelInput &&
        spec_index.at(p.name) < spec_index.at(g.nodes[static_cast<size_t>(p.inputs[0])].name))
      p.follows_input = true;
  // The fusion pass's condition, asked of the layers themselves: a producer whose only
  // consumer is a max pool and that offers a fused layer for one sample.
  for (size_t j = 0; j < graph.nodes.size(); ++j) {
    const model::GraphNode& pool = graph.nodes[j];
    const layers::PoolOptions* opts = pool.layer->max_pool_options();
    if (!opts || pool.inputs.size() != 1 || pool.inputs[0] == model::Graph::kModelInput) continue;
    const size_t i = static_cast<size_t>(pool.inputs[0]);
    if (!spec.fuse_conv_max_pool || graph.nodes[i].consumers != 1) continue;
    if (graph.nodes[i].layer->fused_with_max_pool(pool.layer->name(), *opts, graph.global_input(j, 0, 1)))
      g.nodes[i].fuses_with_consumer = true;
  }
  return g;
}

}  // namespace tessera::plan
