#pragma once
#include <string>
#include <vector>

#include "tessera/model/graph.hpp"

namespace tessera::model::passes {

/// Runs each activation that feeds only a max pool after that pool instead: the same result
/// on fewer elements (see LayerTraits::commutes_with_max_pool). Returns a line per move.
std::vector<std::string> move_activations_after_max_pools(Graph& graph);

}  // namespace tessera::model::passes
