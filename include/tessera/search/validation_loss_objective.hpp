#pragma once
#include "tessera/search/objective.hpp"

namespace tessera::search {

/// The loss on the validation set after the candidate's last step ("validation_loss").
class ValidationLossObjective final : public Objective {
 public:
  std::string name() const override { return "validation_loss"; }
  double measure(TrainedCandidate& candidate) override;
};

}  // namespace tessera::search
