#include "tessera/search/parameter_count_objective.hpp"

namespace tessera::search {

double ParameterCountObjective::measure(TrainedCandidate& candidate) {
  // Every rank of a trainer holds every trainable parameter (data and spatial parallelism
  // replicate them), so one rank's count is the model's.
  return static_cast<double>(candidate.run.model().parameters().trainable_count());
}

}  // namespace tessera::search
