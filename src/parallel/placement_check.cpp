#include "tessera/parallel/placement_check.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

#include "tessera/core/error.hpp"

namespace tessera::parallel {
namespace {

std::string ranks_str(const std::vector<int>& ranks) { return CpuSet(ranks).str(); }

}  // namespace

void check_channel_groups_within_nodes(const Distribution& distribution, const std::vector<int>& node_of_rank,
                                       const std::string& where) {
  const int group = distribution.channel_parts();
  if (group <= 1) return;
  const int ranks = static_cast<int>(node_of_rank.size());
  for (int first = 0; first + group <= ranks; first += group) {
    // The ranks of this group by node, in the order the nodes appear.
    std::vector<std::pair<int, std::vector<int>>> nodes;
    for (int r = first; r < first + group; ++r) {
      const int node = node_of_rank[static_cast<size_t>(r)];
      auto it = std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.first == node; });
      if (it == nodes.end()) it = nodes.insert(nodes.end(), {node, {}});
      it->second.push_back(r);
    }
    if (nodes.size() == 1) continue;
    std::ostringstream s;
    s << "distribution " << distribution.str() << ": the channel group of ranks " << first << "-" << first + group - 1
      << " spans " << nodes.size() << " nodes (";
    for (size_t i = 0; i < nodes.size(); ++i)
      s << (i ? "; " : "") << (nodes[i].second.size() == 1 ? "rank " : "ranks ") << ranks_str(nodes[i].second)
        << (i ? " on another" : " on one node");
    s << "), but its ranks exchange activations at every layer and must share a node's memory. "
      << "Launch K ranks per node, K a multiple of " << group
      << ", placed consecutively (mpirun --map-by ppr:K:node; Slurm: srun --ntasks-per-node=K --distribution=block), "
      << "or split the channels over fewer ranks";
    throw ConfigError(where, s.str());
  }
}

int recommended_ranks_per_node(const NodeTopology& node, int group_size) {
  const int domains = std::max<int>(1, static_cast<int>(node.numa_domains().size()));
  const int group = std::max(1, group_size);
  return std::lcm(domains, group);
}

std::string recommended_launch(const NodeTopology& node, int ranks_per_node) {
  const int domains = std::max<int>(1, static_cast<int>(node.numa_domains().size()));
  const int cores = std::max<int>(1, static_cast<int>(node.cores().size()));
  const int threads = std::max(1, node.cpus().count() / std::max(1, ranks_per_node));
  std::ostringstream s;
  if (ranks_per_node % domains == 0 && ranks_per_node / domains == 1) {
    s << "mpirun --map-by ppr:1:numa --bind-to numa; Slurm: srun --ntasks-per-node=" << ranks_per_node
      << " --cpu-bind=ldoms";
  } else if (ranks_per_node % domains == 0) {
    const int per_domain = ranks_per_node / domains;
    const int cores_each = std::max(1, cores / ranks_per_node);
    s << "mpirun --map-by ppr:" << per_domain << ":numa:PE=" << cores_each
      << " --bind-to core; Slurm: srun --ntasks-per-node=" << ranks_per_node << " --cpus-per-task=" << threads
      << " --cpu-bind=cores";
  } else {
    // Fewer ranks than domains, or a count the domains do not divide: a rank must span
    // domains somewhere, so the advice is the count that does not.
    s << "run " << recommended_ranks_per_node(node)
      << " ranks per node (one per NUMA domain): " << recommended_launch(node, recommended_ranks_per_node(node));
  }
  return s.str();
}

std::string binding_warning(const NodeTopology& node, const std::vector<RankBinding>& ranks) {
  std::vector<std::string> problems;
  if (node.numa_domains().size() > 1) {
    std::vector<int> spanning;
    std::string example;
    for (const auto& r : ranks) {
      const auto domains = node.numa_domains_of(r.cpus);
      if (domains.size() <= 1) continue;
      spanning.push_back(r.rank);
      if (example.empty()) {
        std::vector<int> os;
        for (int d : domains) os.push_back(node.numa_domains()[static_cast<size_t>(d)].os_index);
        example =
            " (rank " + std::to_string(r.rank) + ": CPUs " + r.cpus.str() + ", NUMA domains " + ranks_str(os) + ")";
      }
    }
    if (!spanning.empty())
      problems.push_back("rank(s) " + ranks_str(spanning) + " run threads on several NUMA domains" + example +
                         ", so much of their memory is reached across the interconnect");
  }
  std::vector<int> sharing;
  std::string example;
  std::map<int, int> owner;  // core -> the first rank found on it
  // With more ranks than cores (an oversubscribed test launch) sharing is unavoidable.
  const bool can_avoid_sharing = ranks.size() <= node.cores().size();
  for (size_t i = 0; can_avoid_sharing && i < ranks.size(); ++i) {
    const RankBinding& r = ranks[i];
    for (int core : node.cores_of(r.cpus)) {
      auto [it, fresh] = owner.emplace(core, r.rank);
      if (fresh || it->second == r.rank) continue;
      if (sharing.empty() || sharing.back() != r.rank) sharing.push_back(r.rank);
      if (example.empty())
        example = " (ranks " + std::to_string(it->second) + " and " + std::to_string(r.rank) + " both on CPUs " +
                  node.cores()[static_cast<size_t>(core)].str() + ")";
    }
  }
  if (!sharing.empty())
    problems.push_back("rank(s) " + ranks_str(sharing) + " share cores with other ranks of the node" + example +
                       ", so their threads compete for them");
  if (problems.empty()) return "";
  std::string s;
  for (const auto& p : problems) s += (s.empty() ? "" : "; ") + p;
  const int n = static_cast<int>(ranks.size());
  return s + ". With " + std::to_string(n) + " rank(s) on this node: " + recommended_launch(node, n);
}

void check_channel_group_placement(const ProcessGrid& grid, const std::string& where) {
  if (!grid.distribution().splits_channels()) return;
  check_channel_groups_within_nodes(grid.distribution(), gather_node_ids(grid.all()), where);
}

void warn_about_rank_bindings(const std::vector<RankPlacement>& ranks, int this_rank) {
  if (!NodeTopology::supported()) return;
  std::vector<RankBinding> mine;
  for (const auto& p : ranks)
    if (p.node == this_rank)
      mine.push_back({p.rank, CpuSet::parse(p.cpus, "binding of rank " + std::to_string(p.rank))});
  if (mine.empty()) return;  // not the first rank of its node
  const std::string warning = binding_warning(NodeTopology::this_node(false), mine);
  if (warning.empty()) return;
  std::fprintf(stderr, "tessera: warning: node %s (ranks %s): %s\n", ranks[static_cast<size_t>(this_rank)].host.c_str(),
               ranks_str([&] {
                 std::vector<int> ids;
                 for (const auto& b : mine) ids.push_back(b.rank);
                 return ids;
               }())
                   .c_str(),
               warning.c_str());
  std::fflush(stderr);
}

}  // namespace tessera::parallel
