#include "tessera/search/validation_loss_objective.hpp"

#include "tessera/core/error.hpp"

namespace tessera::search {

double ValidationLossObjective::measure(TrainedCandidate& candidate) {
  if (!candidate.run.trainer().data().validation)
    throw ConfigError("$.base.data.validation_samples", "the validation_loss objective needs validation samples");
  // The trainer validates at the end of the run; a run that stopped before any validation is
  // validated here.
  if (candidate.report.validation_loss >= 0) return candidate.report.validation_loss;
  return candidate.run.trainer().validate().loss;
}

}  // namespace tessera::search
