#pragma once
// A machine profile not measured here, for the plan tests: layers priced by their roofline, so
// the tests measure nothing and their answers do not depend on this machine's speed.
#include <nlohmann/json.hpp>

#include "tessera/core/config.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/plan/machine_profile.hpp"

namespace tessera::test {

inline plan::MachineProfile published_profile() {
  plan::MachineProfile p;
  p.name = "test";
  p.origin = "published";
  p.ranks_per_node = 64;
  p.memory_per_rank = 16.0 * (1 << 30);
  p.peak_flops_per_rank = 1e11;
  p.conv_efficiency = 0.5;
  p.memory_bandwidth_per_rank = 1e10;
  for (auto c : {plan::Collective::point_to_point, plan::Collective::allreduce, plan::Collective::allgather,
                 plan::Collective::alltoall, plan::Collective::reduce_scatter})
    p.within_node[c] = plan::LinkCost{2e-6, 1e-10};
  return p;
}

/// `model` read as the "model" section of a run config.
inline model::ModelSpec spec_of(const nlohmann::json& model) {
  ConfigObject cfg(model, "$.model");
  return model::ModelSpec::from_json(cfg);
}

}  // namespace tessera::test
