#include "tessera/search/step_time_objective.hpp"

#include <algorithm>

namespace tessera::search {

double StepTimeObjective::measure(TrainedCandidate& candidate) {
  // The slowest rank sets the trainer's pace; all agree on it.
  double seconds = candidate.report.samples_per_second > 0 ? 1.0 / candidate.report.samples_per_second : 0.0;
  candidate.run.trainer().group().allreduce_max(&seconds, 1);
  return seconds;
}

}  // namespace tessera::search
