#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/model/model_spec.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/distribution.hpp"
#include "tessera/plan/layer_cost.hpp"
#include "tessera/plan/machine_profile.hpp"
#include "tessera/plan/plan_graph.hpp"

namespace tessera::plan {

/// What to plan for.
struct PlanRequest {
  int ranks = 1;
  int64_t batch = 1;             // the global mini-batch
  std::string backend = "auto";  // the op backend choice the model runs with
  int64_t threads = 1;           // threads per rank (the layer times' key)
  /// Bytes one rank may hold; 0: the profile's memory_per_rank (no limit when that is 0).
  double memory_limit = 0;
  double optimizer_state = 1;  // values the optimizer keeps per trainable element
  /// The fraction by which the fastest layout must be predicted faster than data parallelism
  /// to be taken over it: below the model's error a layout change is a guess, and data
  /// parallelism moves nothing between layers (docs/plan.md, "The search").
  double min_gain = 0.02;
  /// The run config's "optimizer" section: its step is measured over the model's parameters
  /// (null: estimated from the bandwidth).
  nlohmann::json optimizer;
  /// The data a rank holds (CostOptions): samples in the data set, the in-memory store's
  /// budget, batches of input alive at once.
  int64_t data_samples = 0;
  double store_bytes = 0;
  int64_t batches_in_flight = 1;
  /// The ranks that time layers together (LayerTimer): all ranks of the job on this node
  /// that will train, so the times include their contention. Collective over them.
  parallel::Communicator measuring;
  /// The run's "training.precision" (its layers' activations) and "gradient_precision".
  ElementType precision = ElementType::fp32;
  ElementType gradient_precision = ElementType::fp32;
  /// The gradient reducer's bucket in KiB of fp32 gradients ("training.allreduce_bucket_kb").
  int64_t allreduce_bucket_kb = 4096;
  /// Progress: called before each layer measurement.
  std::function<void(const std::string&)> on_measure;
};

/// One layer of a layout with its predicted cost; `redistribution` is what moving its inputs
/// into its distribution costs.
struct PlannedLayer {
  std::string name, type;
  parallel::Distribution distribution;
  LayerCost cost;
  double redistribution = 0, redistribution_memory = 0;
  /// A max pool run fused with the convolution before it: the fused layer's time less the two
  /// layers' (counted as compute).
  double fusion = 0;
};

/// A whole layout and what the model predicts for one training step on one rank.
struct LayoutPrediction {
  std::string label;
  bool valid = true;
  std::string why;  // why a layout is not valid (a layer that cannot run it)
  std::vector<PlannedLayer> layers;
  double compute = 0, communication = 0, step_time = 0;
  double memory = 0;  // peak bytes per rank
  bool fits = true;   // memory within the limit
};

/// The planner's answer: the fastest layout that fits, and the uniform layouts beside it.
struct Plan {
  int ranks = 1;
  int64_t batch = 1;
  double memory_limit = 0;  // 0: none
  bool feasible = true;     // false: nothing fits; `chosen` is then the smallest in memory
  LayoutPrediction chosen;
  /// Set when data parallelism was kept (PlanRequest::min_gain): the step time the fastest
  /// layout found was predicted to take; 0 otherwise.
  double fastest_found = 0;
  double min_gain = 0;
  std::vector<LayoutPrediction> references;  // data parallel, spatial
  int64_t candidates = 0;                    // layer × distribution pairs weighed
  /// Past this many distributions a layer kept only its most promising (docs/plan.md, "The
  /// search"); below 24 where skip connections left too many combinations.
  size_t kept = 24;
  int64_t measured = 0;  // layer times measured for this plan
  /// Where the profile's nodes differ in speed and sharing the batch in proportion to them is
  /// predicted faster: the weights per rank ("training.balance"); empty: even shares.
  std::vector<int64_t> balance;
};

/// Plans `spec` (docs/plan.md): every layer weighed under every distribution of
/// `request.ranks` ranks it accepts, the fastest layout under the memory limit found exactly
/// by search_layout. Where the profile's node kinds differ in speed, it also plans with the
/// batch shared in proportion to the ranks' speeds and keeps that where it pays (Plan::balance). Layer times missing from `profile` are measured and added to it.
/// Throws ConfigError when some layer can run under no distribution of that many ranks, or
/// when the profile lacks a figure the plan needs.
Plan plan_model(const model::ModelSpec& spec, const PlanRequest& request, MachineProfile& profile);

/// The prediction for a given layout: `distributions` per node of `costs.graph()`.
LayoutPrediction predict_layout(LayerCostModel& costs, const std::vector<parallel::Distribution>& distributions,
                                const std::string& label, double base_memory, double memory_limit);

/// The layout a spec states: each layer's own distribution, else the model's, else data
/// parallelism over `ranks`.
std::vector<parallel::Distribution> layout_of(const model::ModelSpec& spec, const PlanGraph& graph, int ranks);

/// Predicts the layout `spec` states (for validation against measured runs).
LayoutPrediction predict_model(const model::ModelSpec& spec, const PlanRequest& request, MachineProfile& profile);

/// Writes a layout into `spec`: the model's distribution (its input's) is the first layer's,
/// and every layer gets its own.
void apply_layout(model::ModelSpec& spec, const LayoutPrediction& layout);

/// The plan as a table for people: per layer the distribution, compute, communication and
/// memory; then the totals beside the references.
std::string plan_table(const Plan& plan);
/// The plan as JSON: {"ranks", "batch", "feasible", "chosen": {...}, "references": [...]},
/// each layout with its per-layer "distribution" objects and predicted figures.
nlohmann::json plan_json(const Plan& plan);
nlohmann::json layout_json(const LayoutPrediction& layout);

}  // namespace tessera::plan
