#pragma once
#include <vector>

#include "tessera/parallel/communicator.hpp"

namespace tessera::plan {

/// Where a job's ranks live: which ranks share a node, so that calibration knows whether the
/// first p ranks time collectives within a node or across nodes.
struct RankPlacement {
  int ranks_on_first_node = 1, nodes = 1;
  std::vector<int> node_of{0};  // per rank of the group: the lowest rank on its node

  /// Whether the group's first `ranks` ranks sit on more than one node.
  bool spans_nodes(int ranks) const;
};

/// The placement of `group`'s ranks (collective over the group); one node for a group of one.
RankPlacement rank_placement(const parallel::Communicator& group);

}  // namespace tessera::plan
