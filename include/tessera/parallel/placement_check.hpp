#pragma once
#include <string>
#include <vector>

#include "tessera/parallel/cpu_set.hpp"
#include "tessera/parallel/distribution.hpp"
#include "tessera/parallel/node_topology.hpp"
#include "tessera/parallel/process_grid.hpp"
#include "tessera/parallel/rank_placement.hpp"

namespace tessera::parallel {

/// Throws ConfigError naming `where` and the distribution when one of its channel groups (the
/// consecutive ranks, channel_parts() at a time, that exchange activations at every layer)
/// has ranks on more than one node. node_of_rank[r] is any value that ranks of one node share.
/// The message lists the group's ranks by node and the launch that keeps groups together.
void check_channel_groups_within_nodes(const Distribution& distribution, const std::vector<int>& node_of_rank,
                                       const std::string& where);

/// One rank of a node and the CPUs it may run on.
struct RankBinding {
  int rank = 0;
  CpuSet cpus;
};

/// What is wrong with the bindings of the ranks of one node, or "" when nothing is: a rank
/// whose CPUs span NUMA domains (its threads reach much of its memory across the
/// interconnect), ranks that share cores (their threads compete for them; not reported when
/// the node has fewer cores than ranks, where it cannot be helped). The text ends with
/// the launch that fixes it (recommended_launch for this many ranks).
std::string binding_warning(const NodeTopology& node, const std::vector<RankBinding>& ranks);

/// The ranks per node for `node` when groups of `group_size` consecutive ranks must share a
/// node: one rank per NUMA domain, or more, as a multiple of group_size.
int recommended_ranks_per_node(const NodeTopology& node, int group_size = 1);

/// mpirun and Slurm options that give each of `ranks_per_node` ranks its own cores inside one
/// NUMA domain (whole domains when there is one rank per domain), placed consecutively.
std::string recommended_launch(const NodeTopology& node, int ranks_per_node);

/// check_channel_groups_within_nodes for the grid's ranks (found with MPI_COMM_TYPE_SHARED).
/// Collective over grid.all(); every rank throws alike. Does nothing when channels are not split.
void check_channel_group_placement(const ProcessGrid& grid, const std::string& where);

/// Prints binding_warning for each node, once, from the node's first rank, to stderr, given
/// the placements of every rank (gather_rank_placements). Does nothing without hwloc.
void warn_about_rank_bindings(const std::vector<RankPlacement>& ranks, int this_rank);

}  // namespace tessera::parallel
