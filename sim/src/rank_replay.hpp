#pragma once
// One simulated rank: replays its operations of the schedule in order, its gradient sums
// behind it as Tessera's reducer runs them.
#include <vector>

#include "platform.hpp"
#include "schedule_file.hpp"

namespace tessera::sim {

/// What one rank's replay measured, in simulated seconds.
struct RankRecord {
  bool finished = false;  // false after the run: the replay never got past operation `next`
  size_t next = 0;        // the operation being replayed
  double finish = 0;      // when its last operation ended (every rank starts at 0)
  double compute = 0;  // of which computing
  /// Per layer (index + 1; [0] is the step's own work: the optimizer, the last wait) the time
  /// from each of its operations' start to its end.
  std::vector<double> layer_seconds;
};

/// Replays rank `rank` of `schedule` in the calling SimGrid actor. Nonblocking allreduces
/// ('iar') are handed, in order, to a second actor on the same node that sums them one after
/// another, as the reducer's buckets follow each other on one communicator; 'wa' waits until
/// it has finished all of them.
/// Its messages cross `platform` as Messenger says.
void replay_rank(const Schedule& schedule, int rank, const Platform& platform, RankRecord& record);

}  // namespace tessera::sim
