#pragma once
// What planning a model needs, built once per plan: the graph, the layer timer and the cost
// model over them, with the optimizer's step and the gradient sum measured where they can be.
// Shared by the planner (layout_planner.cpp) and the step schedule (step_schedule.cpp).
#include "tessera/plan/layer_cost.hpp"
#include "tessera/plan/layer_timer.hpp"
#include "tessera/plan/layout_planner.hpp"
#include "tessera/plan/plan_graph.hpp"

namespace tessera::plan {

inline CostOptions cost_options(const PlanRequest& r, const MachineProfile& profile, layers::HaloOverlap overlap) {
  CostOptions o;
  o.halo_overlap = overlap;
  o.ranks = r.ranks;
  o.optimizer_state = r.optimizer_state;
  o.data_samples = r.data_samples;
  o.store_bytes = r.store_bytes;
  o.batches_in_flight = r.batches_in_flight;
  o.gradient_precision = r.gradient_precision;
  o.gradient_bucket_bytes = static_cast<double>(r.allreduce_bucket_kb) * 1024 / 4 *
                            static_cast<double>(element_size(r.gradient_precision));
  if (!profile.node_kinds.empty()) o.rank_speeds = profile.rank_speeds(r.ranks);
  return o;
}

/// Collective over `r.measuring` where the profile is measured (it times the gradient sum).
struct PlanSetup {
  PlanGraph graph;
  LayerTimer timer;
  LayerCostModel costs;
  double base = 0, limit = 0;

  PlanSetup(const model::ModelSpec& spec, const PlanRequest& r, MachineProfile& profile)
      : graph(plan_graph(spec, r.batch, r.precision)),
        timer(profile, spec.backend.value_or(r.backend), r.threads, r.measuring),
        costs(graph, profile, timer, cost_options(r, profile, spec.halo_overlap)) {
    timer.on_measure = r.on_measure;
    int64_t trainable = 0;
    for (const auto& n : graph.nodes) trainable += n.trainable;
    if (r.optimizer.is_object() && trainable > 0)
      costs.set_update_seconds_per_parameter(timer.optimizer_step(r.optimizer, trainable, r.optimizer_state) /
                                             static_cast<double>(trainable));
    if (profile.origin != "published" && r.ranks > 1 && timer.measuring_ranks() == r.ranks && trainable > 0) {
      const int64_t bytes = trainable * static_cast<int64_t>(element_size(r.gradient_precision));
      const auto bucket = static_cast<int64_t>(costs.options().gradient_bucket_bytes);
      costs.set_allreduce_seconds_per_byte(timer.allreduce_seconds(bytes, r.gradient_precision, bucket) /
                                           static_cast<double>(bytes));
    }
    limit = r.memory_limit > 0 ? r.memory_limit : profile.memory_per_rank;
  }
};

}  // namespace tessera::plan
