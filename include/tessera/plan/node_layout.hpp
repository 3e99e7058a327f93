#pragma once
#include <vector>

#include "tessera/parallel/communicator.hpp"

namespace tessera::plan {

/// Which of a job's ranks share a node, as calibration needs it: whether the first p ranks
/// time collectives within a node or across nodes, and how many ranks the first node holds.
struct NodeLayout {
  int ranks_on_first_node = 1, nodes = 1;
  std::vector<int> node_of{0};  // per rank of the group: the lowest rank on its node

  /// The layout of `group`'s ranks (parallel::gather_node_ids; collective over the group).
  static NodeLayout of(const parallel::Communicator& group);
  /// Whether the group's first `ranks` ranks sit on more than one node.
  bool spans_nodes(int ranks) const;
};

}  // namespace tessera::plan
