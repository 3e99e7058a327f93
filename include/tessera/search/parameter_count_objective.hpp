#pragma once
#include "tessera/search/objective.hpp"

namespace tessera::search {

/// The model's trainable parameters ("parameters"): memory and, roughly, cost.
class ParameterCountObjective final : public Objective {
 public:
  std::string name() const override { return "parameters"; }
  double measure(TrainedCandidate& candidate) override;
};

}  // namespace tessera::search
