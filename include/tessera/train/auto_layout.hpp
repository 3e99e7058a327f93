#pragma once
#include <cstdint>
#include <string>

#include "tessera/model/model_spec.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/plan/layout_planner.hpp"

namespace tessera::train {

/// What planning an "auto" model at start-up needs beside the spec.
struct AutoLayoutOptions {
  int64_t batch = 1;
  std::string backend = "auto";
  double optimizer_state = 1;  // values the optimizer keeps per trainable element
  /// The machine profile (`tessera calibrate`); needed for more than one rank. Layer times
  /// measured while planning are added to it (rank 0 writes it back, atomically).
  std::string machine_file;
  std::string machine_key = "--machine";  // where the file was named, for errors
  nlohmann::json config;                  // the run config (its data section)
  /// The run's activation and gradient-sum types (layer times and bytes are planned in them).
  ElementType precision = ElementType::fp32;
  ElementType gradient_precision = ElementType::fp32;
  int64_t allreduce_bucket_kb = 4096;  // the gradient reducer's bucket ("training.allreduce_bucket_kb")
};

/// Sets what `request` says of the data (samples, store budget, batches in flight) from a run
/// config's "data" section, as the data sets will hold it (docs/config.md: store_mb, prefetch).
void describe_data(const nlohmann::json& config, plan::PlanRequest& request);

/// The layout of a model whose spec says "distribution": "auto", written into `spec`: with one
/// rank every layer runs whole; with more, plan::plan_model on the machine profile. Every rank
/// plans (measuring layers side by side, as they will train), then all take rank 0's layout, so
/// the ranks agree even where their timings differ. Collective over `group`. Returns the plan
/// (its `ranks` is 1 and its layers empty for one rank).
plan::Plan plan_auto_layout(model::ModelSpec& spec, const AutoLayoutOptions& options,
                            const parallel::Communicator& group);

}  // namespace tessera::train
