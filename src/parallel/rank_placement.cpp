#include "tessera/parallel/rank_placement.hpp"

#include <unistd.h>

#include <map>
#include <sstream>

#include "tessera/parallel/node_topology.hpp"

namespace tessera::parallel {
namespace {

/// Each rank's text, on every rank (an Allgatherv of characters).
std::vector<std::string> allgather(const Communicator& group, const std::string& mine) {
  if (group.handle() == MPI_COMM_NULL) return {mine};
  const int n = group.size();
  std::vector<int> lengths(static_cast<size_t>(n)), offsets(static_cast<size_t>(n));
  int length = static_cast<int>(mine.size());
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, group.handle()), "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < n; ++r) {
    offsets[static_cast<size_t>(r)] = total;
    total += lengths[static_cast<size_t>(r)];
  }
  std::string all(static_cast<size_t>(total), '\0');
  check_mpi(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                           group.handle()),
            "MPI_Allgatherv");
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r)
    out.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                             static_cast<size_t>(lengths[static_cast<size_t>(r)])));
  return out;
}

/// The lowest rank of `group` on this rank's node.
int node_leader(const Communicator& group) {
  if (group.handle() == MPI_COMM_NULL) return group.rank();
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(group.handle(), MPI_COMM_TYPE_SHARED, group.rank(), MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int leader = group.rank();
  const int status = MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  check_mpi(status, "MPI_Allreduce");
  return leader;
}

}  // namespace

std::vector<int> gather_node_ids(const Communicator& group) {
  const int mine = node_leader(group);
  if (group.handle() == MPI_COMM_NULL) return {mine};
  std::vector<int> out(static_cast<size_t>(group.size()));
  check_mpi(MPI_Allgather(&mine, 1, MPI_INT, out.data(), 1, MPI_INT, group.handle()), "MPI_Allgather");
  return out;
}

std::vector<RankPlacement> gather_rank_placements(const Communicator& group) {
  RankPlacement me;
  me.rank = group.rank();
  me.node = node_leader(group);
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) me.host = host;
  if (NodeTopology::supported()) {
    const CpuSet cpus = this_process_binding();
    const NodeTopology node = NodeTopology::this_node(false);
    me.cpus = cpus.str();
    std::vector<int> numa;
    for (int i : node.numa_domains_of(cpus)) numa.push_back(node.numa_domains()[static_cast<size_t>(i)].os_index);
    me.numa = CpuSet(numa).str();
  }
  // Fields joined by a byte that host names and CPU lists never hold.
  const std::string mine = std::to_string(me.node) + '\x1f' + me.host + '\x1f' + me.cpus + '\x1f' + me.numa;
  std::vector<RankPlacement> out;
  const auto all = allgather(group, mine);
  for (size_t r = 0; r < all.size(); ++r) {
    std::vector<std::string> f;
    std::istringstream in(all[r]);
    for (std::string part; std::getline(in, part, '\x1f');) f.push_back(part);
    f.resize(4);
    RankPlacement p;
    p.rank = static_cast<int>(r);
    p.node = std::stoi(f[0]);
    p.host = f[1];
    p.cpus = f[2];
    p.numa = f[3];
    out.push_back(std::move(p));
  }
  return out;
}

std::string placement_table(const std::vector<RankPlacement>& ranks) {
  std::ostringstream s;
  std::map<int, std::vector<const RankPlacement*>> by_node;
  for (const auto& r : ranks) by_node[r.node].push_back(&r);
  s << "placement: " << ranks.size() << " rank(s) on " << by_node.size() << " node(s)\n";
  for (const auto& [node, members] : by_node) {
    std::vector<int> ids;
    for (const auto* r : members) ids.push_back(r->rank);
    s << "  node " << members.front()->host << ": ranks " << CpuSet(ids).str() << "\n";
    // Consecutive ranks with the same binding share a line, so a 64-rank node stays short.
    for (size_t i = 0; i < members.size();) {
      size_t j = i;
      while (j + 1 < members.size() && members[j + 1]->cpus == members[i]->cpus &&
             members[j + 1]->rank == members[j]->rank + 1)
        ++j;
      s << "    rank " << members[i]->rank;
      if (j > i) s << "-" << members[j]->rank;
      if (members[i]->cpus.empty())
        s << ": binding unknown (built without hwloc)\n";
      else
        s << ": CPUs " << members[i]->cpus << ", NUMA " << members[i]->numa << "\n";
      i = j + 1;
    }
  }
  return s.str();
}

}  // namespace tessera::parallel
