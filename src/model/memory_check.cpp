#include "tessera/model/memory_check.hpp"

#include "tessera/core/error.hpp"
#include "tessera/parallel/node_ranks.hpp"

namespace tessera::model {
namespace {

int64_t checked_add(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) throw ShapeError("memory need exceeds a 64-bit byte count");
  return sum;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) throw ShapeError("memory need exceeds a 64-bit byte count");
  return product;
}

}  // namespace

MemoryNeed training_memory_need(const Graph& graph, int64_t batch) {
  const Footprint f = graph.footprint(batch);
  MemoryNeed need;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Footprint::Node& n = f.nodes[i];
    const int64_t parameters =
        checked_add(checked_add(checked_mul(2, n.parameters.trainable), n.parameters.buffers), n.parameters.gathered);
    const int64_t bytes =
        checked_add(checked_mul(2, n.activation_bytes), checked_mul(parameters, static_cast<int64_t>(sizeof(float))));
    need.bytes = checked_add(need.bytes, bytes);
    if (bytes > need.largest_bytes) {
      need.largest_bytes = bytes;
      need.largest_node = i;
    }
  }
  return need;
}

void require_training_fits(const Graph& graph, int64_t batch, const std::string& batch_key, int64_t bytes_per_rank,
                           const std::string& capacity_text) {
  // A batch that does not split over the distributions has its own error, where the batch
  // is checked; there is nothing to weigh here.
  if (batch < graph.min_batch) return;
  MemoryNeed need;
  try {
    need = training_memory_need(graph, batch);
  } catch (const ShapeError& e) {
    throw ConfigError(graph.layers_path,
                      std::string(e.what()) + " at a batch of " + std::to_string(batch) + " (" + batch_key + ")");
  }
  if (need.bytes <= bytes_per_rank) return;
  const GraphNode& node = graph.nodes[need.largest_node];
  Shape output = node.global_output;
  output[0] = batch;
  throw ConfigError(
      node.spec_path,
      "training needs at least " + human_bytes(static_cast<double>(need.bytes)) + " per rank at a batch of " +
          std::to_string(batch) + " (" + batch_key + "), but a rank here has " +
          human_bytes(static_cast<double>(bytes_per_rank)) + " (" + capacity_text + "); the most, " +
          human_bytes(static_cast<double>(need.largest_bytes)) + ", goes to layer '" + node.layer->name() + "' (" +
          node.layer->type() + ") with output " + output.str() + " and " + std::to_string(node.parameters.trainable) +
          " parameters, counting gradients\n  (make that layer or the sample smaller, lower the batch, or split "
          "each sample over more ranks with a spatial \"distribution\")");
}

RankMemory memory_per_rank_here(const parallel::Communicator& group) {
  const MemoryCapacity capacity = memory_capacity();
  const int ranks = parallel::ranks_on_this_node(group);
  return {capacity.per_rank(ranks),
          capacity.source + " " + human_bytes(static_cast<double>(capacity.bytes)) +
              (ranks > 1 ? " shared by " + std::to_string(ranks) + " ranks on this node" : "")};
}

void require_training_fits_this_machine(const Graph& graph, int64_t batch, const std::string& batch_key,
                                        const parallel::Communicator& group) {
  const RankMemory memory = memory_per_rank_here(group);
  require_training_fits(graph, batch, batch_key, memory.bytes, memory.text);
}

}  // namespace tessera::model
