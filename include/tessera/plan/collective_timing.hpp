#pragma once
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/mpi_collectives.hpp"
#include "tessera/plan/collective_fit.hpp"
#include "tessera/plan/machine_profile.hpp"
#include "tessera/plan/node_layout.hpp"

namespace tessera::plan {

/// How long and how often collectives are timed: `quick` trades accuracy for a run of seconds.
struct TimingEffort {
  std::vector<double> sizes;  // message sizes n (bytes, as LinkCost defines n)
  int warmup = 2, reps = 7;
  bool quick = false;  // fewer calls per timing of small messages

  /// 8 B to 4 MiB in five sizes; with `quick`, three sizes and fewer repetitions.
  static TimingEffort of(bool quick);
};

/// Times one call of a collective over a group, the way `tessera calibrate` measures the α and
/// β of LinkCost: the slowest rank's seconds, the median of repetitions after a warm-up. Its
/// buffers are kept between timings. Every call is collective over the group.
class CollectiveTimer {
 public:
  explicit CollectiveTimer(TimingEffort effort) : effort_(std::move(effort)) {}

  /// Seconds of one call of `c` with `bytes` (n as LinkCost defines it) over `group`.
  /// Point-to-point is a ping-pong between the group's first and last rank (half the round
  /// trip) while the others wait; it needs two ranks (DistError on one). Allreduce is the
  /// nonblocking sum the gradient reducer runs (MpiCollectives), started and waited for, so
  /// that the planner prices the sums training makes, not MPI_Allreduce's algorithm.
  double seconds(Collective c, double bytes, const parallel::Communicator& group);

 private:
  void call(Collective c, int bytes, const parallel::Communicator& group);
  /// The gradient reducer's sums over `group`, made once per group.
  parallel::MpiCollectives& sums_over(const parallel::Communicator& group);

  TimingEffort effort_;
  std::vector<char> send_, recv_;
  std::unique_ptr<parallel::MpiCollectives> sums_;
  MPI_Comm sums_group_ = MPI_COMM_NULL;
};

/// n as LinkCost defines it for the message a timing of `bytes` over `ranks` ranks really sent
/// (alltoall rounds the per-peer share down to whole bytes, the reductions to whole floats).
double sent_bytes(Collective c, double bytes, int ranks);

/// Every collective's timings, by whether their ranks shared a node.
struct CollectiveTimings {
  std::map<Collective, std::vector<CollectiveSample>> within_node, across_nodes;
};

/// Times point-to-point, allreduce, allgather, alltoall and reduce_scatter at every size of
/// `effort` over the first p ranks of `world` for each p from 2 to `max_ranks`. Collective over
/// `world`: the ranks outside a group wait, so that nothing else loads the node while it
/// measures. `on_group(p, spans_nodes)` is called before each group, for progress.
CollectiveTimings time_collectives(const parallel::Communicator& world, const NodeLayout& placement, int max_ranks,
                                   const TimingEffort& effort,
                                   const std::function<void(int ranks, bool spans_nodes)>& on_group = {});

/// The α and β fitted to each collective's timings (fit_link_cost), into `profile`'s
/// within_node and across_nodes.
void fit_collectives(const CollectiveTimings& timings, MachineProfile& profile);

}  // namespace tessera::plan
