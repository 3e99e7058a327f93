#include "tessera/bench/model_ops.hpp"

#include <algorithm>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/activation.hpp"
#include "tessera/layers/batch_norm.hpp"
#include "tessera/layers/conv.hpp"
#include "tessera/layers/conv_transpose.hpp"
#include "tessera/layers/dense.hpp"
#include "tessera/layers/pool.hpp"
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

std::vector<OpCase> model_op_cases(const nlohmann::json& model_section, int64_t batch) {
  ConfigObject spec(model_section, "$.model");
  model::BuildOptions options;
  options.group = parallel::Communicator::world();
  const model::ModelSpec model_spec = model::ModelSpec::from_json(spec);
  model::Graph graph = model::build_graph(model_spec, options);
  // The passes that change which ops run on which shapes, except the fusion: a fused layer
  // runs the same convolution and pooling, in slabs.
  for (const auto& pass : model::passes::all())
    if (std::string(pass.name) != "fuse_conv_max_pool") pass.run(graph);
  try {
    graph.check_batch(batch);
  } catch (const ShapeError& e) {
    throw ConfigError("$.training.batch_size", e.what());
  }
  std::vector<OpCase> cases;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const layers::Layer& layer = *graph.nodes[i].layer;
    const std::vector<Shape> inputs = graph.local_inputs(i, batch);
    OpCase c;
    c.layer = layer.name();
    c.reads_model_input = graph.nodes[i].inputs.size() == 1 && graph.nodes[i].inputs[0] == model::Graph::kModelInput;
    if (const auto* conv = dynamic_cast<const layers::Conv*>(&layer)) {
      c.kind = ops::OpKind::conv;
      c.conv = conv->geometry(inputs[0]);
    } else if (const auto* pool = dynamic_cast<const layers::Pool*>(&layer)) {
      c.kind = ops::OpKind::pool;
      c.pool = pool->geometry(inputs[0]);
    } else if (const auto* act = dynamic_cast<const layers::Activation*>(&layer)) {
      c.kind = ops::OpKind::eltwise;
      c.eltwise = act->desc();
      c.eltwise_elements = inputs[0].numel();
    } else if (const auto* bn = dynamic_cast<const layers::BatchNorm*>(&layer)) {
      c.kind = ops::OpKind::batch_norm;
      c.batch_norm.channels = inputs[0][inputs[0].rank() - 1];
      c.batch_norm.rows = inputs[0].numel() / c.batch_norm.channels;
      c.batch_norm.epsilon = static_cast<float>(bn->epsilon());
    } else if (const auto* dense = dynamic_cast<const layers::Dense*>(&layer)) {
      c.kind = ops::OpKind::inner_product;
      c.inner_product.batch = inputs[0][0];
      c.inner_product.in_features = inputs[0].numel() / inputs[0][0];
      c.inner_product.out_features = dense->units();
    } else if (const auto* up = dynamic_cast<const layers::ConvTranspose*>(&layer)) {
      c.runner = CaseRunner::conv_transpose;
      c.kind = ops::OpKind::conv;
      c.conv = up->adjoint_geometry(inputs[0]);
      c.bias = up->options().bias;
    } else {
      // A layer of the spec whose kernels are its own; the rest (redistributions) communicate.
      const auto entry = std::find_if(model_spec.layers.begin(), model_spec.layers.end(),
                                      [&](const model::LayerSpec& ls) { return ls.name == layer.name(); });
      if (entry == model_spec.layers.end() || entry->type != layer.type()) continue;
      const model::GraphNode& node = graph.nodes[i];
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
    }
    cases.push_back(c);
  }
  return cases;
}

}  // namespace tessera::bench
