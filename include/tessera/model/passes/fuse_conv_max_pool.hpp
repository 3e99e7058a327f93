#pragma once
#include <string>
#include <vector>

#include "tessera/model/graph.hpp"

namespace tessera::model::passes {

/// Replaces each layer whose only consumer is a max pool by the one layer its
/// Layer::fused_with_max_pool makes (a convolution's layers::ConvMaxPool, where that pays
/// off), on host builds, without spatial splits, and unless the spec's "fuse_conv_max_pool"
/// is false. Returns a line per fusion.
std::vector<std::string> fuse_conv_max_pool(Graph& graph);

}  // namespace tessera::model::passes
