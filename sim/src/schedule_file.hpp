#pragma once
// The step schedule that `tessera plan --schedule` writes (docs/simulation.md, "The schedule
// file"), read without the Tessera library: that library links MPI, and SimGrid's library
// defines MPI's symbols too (for SMPI), so the two cannot share a process.
#include <string>
#include <utility>
#include <vector>

namespace tessera::sim {

/// Ranks first, first + stride, ..., count of them: every group a Tessera layout forms (a
/// sample's spatial ranks, a channel group, the replicas of a weight shard) is one.
struct RankGroup {
  int first = 0, stride = 1, count = 1;
  int member(int i) const { return first + stride * i; }
  /// The position of `rank` in the group, or -1.
  int index_of(int rank) const;
};

enum class OpKind { compute, exchange, allreduce, allreduce_start, wait_all, allgather, reduce_scatter, alltoall };

/// One operation of a rank's step. Bytes of collectives are n as Tessera's alpha-beta model
/// defines it (docs/machine_profile.md): the buffer of an allreduce, one rank's part of an
/// allgather or reduce-scatter, all that one rank sends in an alltoall.
struct Op {
  OpKind kind = OpKind::compute;
  int layer = -1;        // index into Schedule::layers; -1: the step's own work
  double seconds = 0;    // compute; exchange: compute done while its messages travel ("xo")
  double bytes = 0;      // collectives
  RankGroup group;       // collectives
  std::vector<std::pair<int, double>> sends;  // exchange: (peer rank, bytes sent to it)
  std::vector<int> receives;                   // exchange: the ranks it receives from
};

struct Schedule {
  int ranks = 0, ranks_per_node = 1;
  double predicted_step = 0;  // the planner's step time, for comparison
  double measured_step = 0;   // a traced run's step time (tessera train --trace); 0: none
  std::string label;          // the layout, in words
  std::vector<std::string> layers;
  std::vector<std::vector<Op>> ops;  // per rank
};

/// Reads a schedule file. Throws std::runtime_error "PATH:LINE: what is wrong" for anything
/// that is not a schedule: an unknown operation, a rank or group outside the job, a rank that
/// is missing, and exchanges whose sends and receives do not pair up between ranks (the
/// replay would wait forever).
Schedule read_schedule(const std::string& path);

}  // namespace tessera::sim
