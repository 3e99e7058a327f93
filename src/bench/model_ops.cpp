#include "tessera/bench/model_ops.hpp"

#include <algorithm>
#include <optional>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/model/passes/passes.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::bench {

namespace {

std::string shape_list(const std::vector<Shape>& shapes) {
  std::string s;
  for (const Shape& x : shapes) s += (s.empty() ? "" : " + ") + x.str();
  return s;
}

}  // namespace

std::string OpCase::shape() const {
  if (runner == CaseRunner::conv_transpose) return "transposed of " + conv.str();
  if (runner == CaseRunner::layer) return layer_type + " " + shape_list(inputs) + " -> " + output.str();
  switch (kind) {
    case ops::OpKind::conv: return conv.str();
    case ops::OpKind::pool: return pool.str();
    case ops::OpKind::eltwise: return eltwise.str() + " over " + std::to_string(eltwise_elements);
    case ops::OpKind::batch_norm:
      return "batch norm " + std::to_string(batch_norm.rows) + "x" + std::to_string(batch_norm.channels);
    case ops::OpKind::inner_product:
      return "inner product " + std::to_string(inner_product.batch) + "x" + std::to_string(inner_product.in_features) +
             "->" + std::to_string(inner_product.out_features);
  }
  return "";
}

namespace {

/// The model's graph as training builds it, with the passes that change which ops run on
/// which shapes, except the fusion: a fused layer runs the same convolution and pooling, in
/// slabs.
model::Graph op_graph(const model::ModelSpec& model_spec, int64_t batch, ElementType precision) {
  model::BuildOptions options;
  options.group = parallel::Communicator::world();
  options.precision = precision;
  model::Graph graph = model::build_graph(model_spec, options);
  for (const auto& pass : model::passes::all())
    if (std::string(pass.name) != "fuse_conv_max_pool") pass.run(graph);
  try {
    graph.check_batch(batch);
  } catch (const ShapeError& e) {
    throw ConfigError("$.training.batch_size", e.what());
  }
  return graph;
}

/// The case of a layer that runs a backend op, as the layer declares it.
void set_backend_op(const layers::LayerOp& op, OpCase& c) {
  static_cast<layers::LayerOp&>(c) = op;
  c.runner = op.adjoint_conv ? CaseRunner::conv_transpose : CaseRunner::op;
}

/// The case of node `i`, a layer of the spec whose kernels are its own; false for the nodes
/// the graph added (redistributions), which communicate.
bool set_own_layer(const model::ModelSpec& model_spec, const model::Graph& graph, size_t i,
                   const std::vector<Shape>& inputs, int64_t batch, OpCase& c) {
  const model::GraphNode& node = graph.nodes[i];
  const layers::Layer& layer = *node.layer;
  const auto entry = std::find_if(model_spec.layers.begin(), model_spec.layers.end(),
                                  [&](const model::LayerSpec& ls) { return ls.name == layer.name(); });
  if (entry == model_spec.layers.end() || entry->type != layer.type()) return false;
  c.runner = CaseRunner::layer;
  c.layer_type = entry->type;
  c.layer_config = entry->config;
  c.layer_path = entry->path;
  c.inputs = inputs;
  for (int in : node.inputs) c.input_grads.push_back(in != model::Graph::kModelInput);
  Shape out = node.global_output;
  out[0] = batch;
  c.output = node.grid().local_shape(out, "layer '" + layer.name() + "' (" + layer.type() + ")");
  c.context = node.context;
  c.context.ops = nullptr;  // the graph's factory; the timing gives the layer its own
  c.batch = batch;
  return true;
}

}  // namespace

std::vector<OpCase> model_op_cases(const nlohmann::json& model_section, int64_t batch, ElementType precision) {
  ConfigObject spec(model_section, "$.model");
  const model::ModelSpec model_spec = model::ModelSpec::from_json(spec);
  const model::Graph graph = op_graph(model_spec, batch, precision);
  std::vector<OpCase> cases;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const layers::Layer& layer = *graph.nodes[i].layer;
    const std::vector<Shape> inputs = graph.local_inputs(i, batch);
    OpCase c;
    c.layer = layer.name();
    c.reads_model_input = graph.nodes[i].inputs.size() == 1 && graph.nodes[i].inputs[0] == model::Graph::kModelInput;
    if (const std::optional<layers::LayerOp> op = layer.backend_op(inputs))
      set_backend_op(*op, c);
    else if (!set_own_layer(model_spec, graph, i, inputs, batch, c))
      continue;
    cases.push_back(c);
  }
  return cases;
}

}  // namespace tessera::bench
