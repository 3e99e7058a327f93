#pragma once
#include "tessera/search/objective.hpp"

namespace tessera::search {

/// Measured training seconds per sample over the candidate's run ("step_time"). Measured, so
/// it varies from run to run and machine to machine: a search with it is not reproducible.
class StepTimeObjective final : public Objective {
 public:
  std::string name() const override { return "step_time"; }
  double measure(TrainedCandidate& candidate) override;
};

}  // namespace tessera::search
