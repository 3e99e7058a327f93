#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/bench/machine_description.hpp"
#include "tessera/bench/op_benchmark.hpp"
#include "tessera/bench/peak_measure.hpp"

namespace tessera::bench {

/// One op direction of a result with the figures derived from it on its machine.
struct OpResult {
  OpTiming timing;
  std::string platform;        // "<backend>@<threads>t" unless the user named it
  double arch_efficiency = 0;  // roofline bound over the time (0 when not supported)
  double app_efficiency = 0;   // the fastest backend's time for this op over this one's
  bool memory_bound = false;   // the bandwidth bounds it at the measured peak
};

/// The end-to-end training step of one backend choice, and where its time goes.
struct ModelResult {
  std::string backend, platform;
  ElementType precision = ElementType::fp32;  // the run's training.precision (tf32 counts as fp32)
  bool supported = true;
  std::string why;
  int64_t steps = 0;        // timed steps (after the warm-up)
  double step_seconds = 0;  // median
  double samples_per_second = 0;
  // The step split by the per-op timings of the same backend: ops the roofline calls
  // compute-bound, memory-bound (the layers that run their own kernels, such as concat, among
  // them), the gradient all-reduce wait, and the rest (optimizer, loss, data, redistributions;
  // negative when the ops ran faster in the step than alone).
  double compute_bound_seconds = 0, memory_bound_seconds = 0, communication_seconds = 0, other_seconds = 0;
  double roofline_seconds = 0;  // Σ of the ops' roofline bounds: the step at the machine's limits
  double arch_efficiency = 0;   // roofline_seconds / step_seconds
  double app_efficiency = 0;    // the fastest backend choice's step over this one's
};

/// What one `tessera bench` command measured, with the machine it ran on: written as JSON by
/// peak, ops and model, read back (strictly, errors naming the file and key) by report.
struct BenchResult {
  static constexpr const char* kFormat = "tessera-bench-result";
  static constexpr int kVersion = 1;

  std::string kind;             // "peak", "ops" or "model"
  std::string model;            // the model's name (ops, model)
  std::string config;           // the run config it came from
  int64_t batch = 0, size = 0;  // global batch and sample size (0: the config's)
  MachineDescription machine;
  PeakFigures peak;
  std::vector<OpResult> ops;
  std::vector<ModelResult> models;

  nlohmann::json to_json() const;
  /// Reads a result; `source` (the file) prefixes the JSON path of every error.
  static BenchResult from_json(const nlohmann::json& j, const std::string& source);
  static BenchResult read(const std::string& file);
  /// Writes atomically: a reader never sees half a result.
  void write(const std::string& file) const;
};

/// Fills the architectural efficiency and the roofline side of every op of `result` from its
/// peak (the bf16 peak for a bf16 op, where measured), and the application efficiency against
/// the fastest supported backend of `result` in the op's type.
void derive_op_efficiencies(BenchResult& result);
/// Fills the application efficiency of every model result: the fastest supported step of
/// `result` in its precision over each one's.
void derive_model_efficiencies(BenchResult& result);

}  // namespace tessera::bench
