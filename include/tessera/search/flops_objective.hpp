#pragma once
#include "tessera/search/objective.hpp"

namespace tessera::search {

/// Forward FLOPs per sample of the compute-bound layers ("flops"): the cost of inference,
/// independent of the machine and of timing noise.
class FlopsObjective final : public Objective {
 public:
  std::string name() const override { return "flops"; }
  double measure(TrainedCandidate& candidate) override;
};

}  // namespace tessera::search
