#include "tessera/model/passes/fuse_batch_norm_activation.hpp"

namespace tessera::model::passes {

std::vector<std::string> fuse_batch_norm_activation(Graph& graph) {
  // Batch norm and the activation after it are both bandwidth-bound sweeps: fused, the
  // activation adds no pass over memory, forward or backward, and its input is never stored.
  if (!graph.fuse_batch_norm_activation) return {};
  std::vector<std::string> fused;
  auto& nodes = graph.nodes;
  for (size_t i = 0; i + 1 < nodes.size(); ++i) {
    GraphNode& producer = nodes[i];
    const GraphNode& act_node = nodes[i + 1];
    const ops::EltwiseDesc* act = act_node.layer->activation_desc();
    if (act == nullptr || producer.consumers != 1 || act_node.inputs != std::vector<int>{static_cast<int>(i)} ||
        !(producer.grid().distribution() == act_node.grid().distribution()) ||
        producer.context.precision != act_node.context.precision)
      continue;
    auto layer = producer.layer->fused_with_activation(act_node.layer->name(), *act);
    if (!layer || !layers::runs_in(layer->traits(), producer.context.precision)) continue;
    fused.push_back("graph: '" + layer->name() + "' applies " + act->str() +
                    " in the batch norm's own passes (the activation's input is never stored)");
    producer.layer = std::move(layer);
    producer.consumers = act_node.consumers;
    producer.global_output = act_node.global_output;
    graph.remove(i + 1, static_cast<int>(i));
  }
  return fused;
}

}  // namespace tessera::model::passes
