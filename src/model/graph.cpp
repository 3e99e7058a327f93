#include "tessera/model/graph.hpp"

#include "tessera/core/error.hpp"

namespace tessera::model {

Shape Graph::input_shape(int64_t batch) const {
  std::vector<int64_t> dims{batch};
  for (auto d : sample_shape.dims()) dims.push_back(d);
  return Shape(dims);
}

Shape Graph::global_input(size_t node, size_t k, int64_t batch) const {
  const int in = nodes[node].inputs[k];
  if (in == kModelInput) return input_shape(batch);
  Shape s = nodes[static_cast<size_t>(in)].global_output;
  s[0] = batch;
  return s;
}

std::vector<Shape> Graph::global_inputs(size_t node, int64_t batch) const {
  std::vector<Shape> globals;
  for (size_t k = 0; k < nodes[node].inputs.size(); ++k) globals.push_back(global_input(node, k, batch));
  return globals;
}

std::vector<Shape> Graph::local_inputs(size_t node, int64_t batch) const {
  std::vector<Shape> locals;
  for (size_t k = 0; k < nodes[node].inputs.size(); ++k) {
    const int in = nodes[node].inputs[k];
    const Shape global = global_input(node, k, batch);
    if (in == kModelInput) {
      locals.push_back(input_grid.local_shape(global, "model input"));
    } else {
      const GraphNode& producer = nodes[static_cast<size_t>(in)];
      locals.push_back(producer.grid().local_shape(
          global, "layer '" + producer.layer->name() + "' (" + producer.layer->type() + ")"));
    }
  }
  return locals;
}

void Graph::check_batch(int64_t batch) const {
  if (batch < min_batch)
    throw ShapeError("a global batch of " + std::to_string(batch) + " samples leaves some of the model's " +
                     std::to_string(min_batch) + " sample groups without a sample; use at least " +
                     std::to_string(min_batch));
  for (const auto& node : nodes) node.grid().local_batch(batch, "layer '" + node.layer->name() + "'");
}

Footprint Graph::footprint(int64_t batch) const {
  check_batch(batch);
  Footprint f;
  for (const auto& node : nodes) {
    Shape global = node.global_output;
    global[0] = batch;
    const std::string where = "layer '" + node.layer->name() + "' (" + node.layer->type() + ")";
    int64_t bytes = 0;
    // In the layer's precision: a bf16 output takes half an fp32 one's bytes.
    const auto element = static_cast<int64_t>(element_size(node.context.precision));
    if (__builtin_mul_overflow(node.grid().local_shape(global, where).numel(), element, &bytes))
      throw ShapeError(where + ": output " + global.str() + " takes more bytes than a 64-bit count can hold");
    Footprint::Node n{node.layer->name(), bytes, node.parameters};
    f.activation_bytes += n.activation_bytes;
    f.parameters.trainable += n.parameters.trainable;
    f.parameters.buffers += n.parameters.buffers;
    f.parameters.gathered += n.parameters.gathered;
    f.nodes.push_back(std::move(n));
  }
  f.parameter_bytes = (2 * f.parameters.trainable + f.parameters.buffers) * static_cast<int64_t>(sizeof(float));
  return f;
}

void Graph::remove(size_t node, int replacement) {
  nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(node));
  const int removed = static_cast<int>(node);
  for (size_t j = node; j < nodes.size(); ++j)
    for (int& in : nodes[j].inputs)
      if (in >= removed) in = in == removed ? replacement : in - 1;
}

}  // namespace tessera::model
