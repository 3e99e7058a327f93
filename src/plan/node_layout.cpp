#include "tessera/plan/node_layout.hpp"

#include <algorithm>
#include <set>

#include "tessera/parallel/rank_placement.hpp"

namespace tessera::plan {

NodeLayout NodeLayout::of(const parallel::Communicator& group) {
  NodeLayout layout;
  layout.node_of = parallel::gather_node_ids(group);
  layout.nodes = static_cast<int>(std::set<int>(layout.node_of.begin(), layout.node_of.end()).size());
  layout.ranks_on_first_node =
      static_cast<int>(std::count(layout.node_of.begin(), layout.node_of.end(), layout.node_of.front()));
  return layout;
}

bool NodeLayout::spans_nodes(int ranks) const {
  const auto end = node_of.begin() + std::min<std::ptrdiff_t>(ranks, static_cast<std::ptrdiff_t>(node_of.size()));
  return std::any_of(node_of.begin(), end, [&](int node) { return node != node_of.front(); });
}

}  // namespace tessera::plan
