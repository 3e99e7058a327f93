#pragma once
// The collectives of a schedule as the point-to-point messages MPI libraries send for them, the
// algorithms whose alpha-beta formulas Tessera's machine profiles price (Thakur, Rabenseifner
// and Gropp, "Optimization of collective communication operations in MPICH", IJHPCA 2005), so
// the simulator and the planner differ only in what the network does to those messages.
#include "messenger.hpp"
#include "schedule_file.hpp"

namespace tessera::sim {

/// Buffers below this many bytes are summed by recursive doubling (log2 p messages of the whole
/// buffer), larger ones by Rabenseifner's reduce-scatter (recursive halving, nearest partner
/// first) and allgather (recursive doubling), as MPICH chooses; a group that is not a power of
/// two first folds its first 2r members in pairs.
constexpr double kShortAllreduceBytes = 2048;

/// Each member of `group` calls these with its own messenger; `bytes` is n as the schedule
/// states it (schedule_file.hpp).
void allreduce(Messenger& m, const RankGroup& group, double bytes);
void allgather(Messenger& m, const RankGroup& group, double bytes);       // ring
void reduce_scatter(Messenger& m, const RankGroup& group, double bytes);  // ring
void alltoall(Messenger& m, const RankGroup& group, double bytes);        // pairwise exchange

}  // namespace tessera::sim
