#include "tessera/search/flops_objective.hpp"

namespace tessera::search {

double FlopsObjective::measure(TrainedCandidate& candidate) { return candidate.run.model().forward_flops_per_sample(); }

}  // namespace tessera::search
