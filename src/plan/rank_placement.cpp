#include "tessera/plan/rank_placement.hpp"

#include <algorithm>
#include <set>

namespace tessera::plan {

bool RankPlacement::spans_nodes(int ranks) const {
  const auto end = node_of.begin() + std::min<std::ptrdiff_t>(ranks, static_cast<std::ptrdiff_t>(node_of.size()));
  return std::any_of(node_of.begin(), end, [&](int node) { return node != node_of.front(); });
}

RankPlacement rank_placement(const parallel::Communicator& group) {
  // The node's group is ordered by this group's ranks, so its lowest is the node's name.
  const std::vector<double> on_node = group.split_node().allgather(group.rank());
  const double leader = *std::min_element(on_node.begin(), on_node.end());
  RankPlacement pl;
  pl.node_of.clear();
  for (const double l : group.allgather(leader)) pl.node_of.push_back(static_cast<int>(l));
  pl.nodes = static_cast<int>(std::set<int>(pl.node_of.begin(), pl.node_of.end()).size());
  pl.ranks_on_first_node = static_cast<int>(std::count(pl.node_of.begin(), pl.node_of.end(), pl.node_of.front()));
  return pl;
}

}  // namespace tessera::plan
