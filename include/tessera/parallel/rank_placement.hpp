#pragma once
#include <string>
#include <vector>

#include "tessera/parallel/communicator.hpp"

namespace tessera::parallel {

/// Where one rank of a group runs: its host, its node (the lowest rank of the group that
/// shares its memory, from MPI_COMM_TYPE_SHARED), the CPUs it is bound to and the NUMA
/// domains (hwloc OS indices) they lie in. cpus and numa are "" in a build without hwloc.
struct RankPlacement {
  int rank = 0;
  int node = 0;
  std::string host, cpus, numa;
};

/// Each rank's node (the lowest rank of `group` that shares its memory), on every rank, in
/// rank order. Collective over `group`; needs no hwloc.
std::vector<int> gather_node_ids(const Communicator& group);

/// Every rank's placement, on every rank, in rank order. Collective over `group`.
std::vector<RankPlacement> gather_rank_placements(const Communicator& group);

/// A compact table for the run header: one line per node with its ranks, then each rank's
/// CPUs and NUMA domains (ranks with the same binding on one line).
std::string placement_table(const std::vector<RankPlacement>& ranks);

}  // namespace tessera::parallel
