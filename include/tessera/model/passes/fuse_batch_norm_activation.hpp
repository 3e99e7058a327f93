#pragma once
#include <string>
#include <vector>

#include "tessera/model/graph.hpp"

namespace tessera::model::passes {

/// Replaces each layer that can take an activation as its epilogue (Layer::fused_with_activation:
/// a batch norm) and whose only consumer is a pointwise activation (Layer::activation_desc) by
/// the one layer that computes both in the same passes over memory, where the two share a
/// distribution and a precision, unless the spec's "fuse_batch_norm_activation" is false. Works
/// under every layout: the fused layer splits as the batch norm does, and the activation is
/// pointwise. Returns a line per fusion.
std::vector<std::string> fuse_batch_norm_activation(Graph& graph);

}  // namespace tessera::model::passes
