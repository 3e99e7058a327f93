#include "tessera/plan/collective_timing.hpp"

#include <algorithm>
#include <chrono>

#include "tessera/core/statistics.hpp"

namespace tessera::plan {
namespace {

/// Calls of one timing: small messages repeated so that the timer's resolution and the barrier
/// before them do not decide the figure.
int calls_per_timing(double bytes, bool quick) {
  if (bytes <= 1024) return quick ? 10 : 50;
  if (bytes <= 65536) return quick ? 3 : 10;
  return 1;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

TimingEffort TimingEffort::of(bool quick) {
  if (quick) return {{8, 64 << 10, 1 << 20}, 1, 3, true};
  return {{8, 1 << 10, 64 << 10, 1 << 20, 4 << 20}, 2, 7, false};
}

void CollectiveTimer::call(Collective c, int n, const parallel::Communicator& group) {
  const int p = group.size(), rank = group.rank();
  const int floats = std::max(1, n / 4);
  switch (c) {
    case Collective::point_to_point:
      if (rank == 0) {
        group.send_bytes(send_.data(), n, p - 1, 0);
        group.recv_bytes(recv_.data(), n, p - 1, 0);
      } else if (rank == p - 1) {
        group.recv_bytes(recv_.data(), n, 0, 0);
        group.send_bytes(send_.data(), n, 0, 0);
      }
      return;
    case Collective::allreduce: {
      parallel::MpiCollectives& sums = sums_over(group);
      sums.start_allreduce_sum(reinterpret_cast<float*>(recv_.data()), floats, 0);
      sums.wait_all();
      return;
    }
    case Collective::allgather: group.allgather_bytes(send_.data(), recv_.data(), n); return;
    case Collective::alltoall:
      group.alltoall_bytes(send_.data(), recv_.data(), std::max(1, n / p));  // what one rank sends each other
      return;
    case Collective::reduce_scatter:
      group.reduce_scatter_sum(reinterpret_cast<const float*>(send_.data()), reinterpret_cast<float*>(recv_.data()),
                               floats);
      return;
  }
}

parallel::MpiCollectives& CollectiveTimer::sums_over(const parallel::Communicator& group) {
  if (!sums_ || sums_group_ != group.handle()) {
    sums_ = std::make_unique<parallel::MpiCollectives>(group, 1);
    sums_group_ = group.handle();
  }
  return *sums_;
}

double CollectiveTimer::seconds(Collective c, double bytes, const parallel::Communicator& group) {
  const int n = static_cast<int>(bytes);
  const size_t need = static_cast<size_t>(group.size()) * static_cast<size_t>(std::max(n, 4)) + 64;
  // Zeros: the reductions then stay clear of denormal and infinite floats, which run slower.
  if (send_.size() < need) send_.assign(need, 0), recv_.assign(need, 0);
  const int calls = calls_per_timing(bytes, effort_.quick);
  for (int w = 0; w < effort_.warmup; ++w) call(c, n, group);
  std::vector<double> times;
  for (int r = 0; r < effort_.reps; ++r) {
    group.barrier();
    const double t0 = now();
    for (int k = 0; k < calls; ++k) call(c, n, group);
    double t = (now() - t0) / calls;
    if (c == Collective::point_to_point) t /= 2;
    group.allreduce_max(&t, 1);
    times.push_back(t);
  }
  return median(times);
}

double sent_bytes(Collective c, double bytes, int ranks) {
  if (c == Collective::alltoall) return static_cast<double>(std::max(1, static_cast<int>(bytes) / ranks)) * ranks;
  if (c == Collective::allreduce || c == Collective::reduce_scatter)
    return 4.0 * std::max(1, static_cast<int>(bytes) / 4);
  return bytes;
}

CollectiveTimings time_collectives(const parallel::Communicator& world, const NodeLayout& placement, int max_ranks,
                                   const TimingEffort& effort,
                                   const std::function<void(int ranks, bool spans_nodes)>& on_group) {
  CollectiveTimings timings;
  CollectiveTimer timer(effort);
  for (int ranks = 2; ranks <= std::min(max_ranks, world.size()); ++ranks) {
    const bool spans = placement.spans_nodes(ranks);
    if (on_group) on_group(ranks, spans);
    const bool member = world.rank() < ranks;
    const parallel::Communicator group = world.split(member ? 0 : 1, world.rank());
    if (member)
      for (Collective c : kAllCollectives)
        for (const double bytes : effort.sizes) {
          const double t = timer.seconds(c, bytes, group);
          (spans ? timings.across_nodes : timings.within_node)[c].push_back({ranks, sent_bytes(c, bytes, ranks), t});
        }
    // The ranks outside the group wait here: nothing else may load the node while it measures.
    world.barrier();
  }
  return timings;
}

void fit_collectives(const CollectiveTimings& timings, MachineProfile& profile) {
  for (const auto& [c, samples] : timings.within_node) profile.within_node[c] = fit_link_cost(c, samples);
  for (const auto& [c, samples] : timings.across_nodes) {
    const auto within = profile.within_node.find(c);
    if (c != Collective::allreduce || profile.ranks_per_node <= 1 || within == profile.within_node.end()) {
      profile.across_nodes[c] = fit_link_cost(c, samples);
      continue;
    }
    // An allreduce over nodes of several ranks is priced in two parts (allreduce_split_terms):
    // the across-node figures are fitted to what the within-node part leaves of each timing.
    const int64_t per_node = profile.ranks_per_node;
    const LinkCost node = within->second;
    profile.across_nodes[c] = fit_link_cost(
        samples, [per_node](const CollectiveSample& s) { return allreduce_split_terms(s.ranks, per_node, s.bytes).across; },
        [per_node, node](const CollectiveSample& s) {
          const AlphaBetaTerms inside = allreduce_split_terms(s.ranks, per_node, s.bytes).within;
          return s.seconds - inside.alpha * node.alpha - inside.beta * node.beta;
        },
        "allreduce across nodes");
  }
}

}  // namespace tessera::plan
