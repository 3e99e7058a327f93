#include "tessera/model/passes/fuse_conv_max_pool.hpp"

#include "tessera/core/tensor.hpp"

namespace tessera::model::passes {

std::vector<std::string> fuse_conv_max_pool(Graph& graph) {
  // Slabs of a few MB are too small to keep a GPU busy, and its memory is fast: host only.
  if (!graph.fuse_conv_max_pool || !Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) return {};
  std::vector<std::string> fused;
  auto& nodes = graph.nodes;
  for (size_t i = 0; i + 1 < nodes.size(); ++i) {
    GraphNode& producer = nodes[i];
    const GraphNode& pool_node = nodes[i + 1];
    const layers::PoolOptions* pool = pool_node.layer->max_pool_options();
    if (pool == nullptr || producer.inputs.size() != 1 || producer.consumers != 1 ||
        pool_node.inputs != std::vector<int>{static_cast<int>(i)} ||
        !(producer.grid().distribution() == pool_node.grid().distribution()) ||
        producer.grid().distribution().is_spatial() || producer.grid().distribution().shard_weights)
      continue;  // the fused slabs read the weight as stored: not a shard to gather
    auto layer = producer.layer->fused_with_max_pool(pool_node.layer->name(), *pool, graph.global_input(i, 0, 1));
    if (!layer || (producer.grid().distribution().splits_channels() && !layer->traits().channel_split)) continue;
    // The fused layer's slab kernels are its own; it runs only in the types it declares.
    if (producer.context.precision != pool_node.context.precision ||
        !layers::runs_in(layer->traits(), producer.context.precision))
      continue;
    fused.push_back("graph: '" + layer->name() +
                    "' pools each slab of the convolution's output as it is computed "
                    "(its full output is never stored)");
    producer.layer = std::move(layer);
    producer.consumers = pool_node.consumers;
    producer.global_output = pool_node.global_output;
    producer.parameters.trainable += pool_node.parameters.trainable;
    producer.parameters.buffers += pool_node.parameters.buffers;
    producer.parameters.gathered += pool_node.parameters.gathered;
    graph.remove(i + 1, static_cast<int>(i));
  }
  return fused;
}

}  // namespace tessera::model::passes
