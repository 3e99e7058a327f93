#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/bench/bench_result.hpp"

namespace tessera::bench {

/// How a model's training step is timed.
struct ModelBenchOptions {
  std::string backend = "auto";  // the op backend choice the model is built with
  std::string platform;          // the label results carry
  int64_t warmup_steps = 2;      // untimed (first-touch allocation, primitive creation)
  int64_t steps = 5;             // timed; the median is kept
  bool progress = true;
};

/// Trains `config` (a run config, already scaled) for warm-up plus timed steps with the op
/// backend `options.backend` and returns the median step with its split into compute-bound,
/// memory-bound and communication time. `ops` are the per-op results of the same model on
/// this machine (an ops run): the split and the roofline bound take each op from the backend
/// the choice runs it on. A backend that declines an op of the model gives a result marked not
/// supported, with the reason, and trains nothing.
ModelResult benchmark_model(const nlohmann::json& config, const ModelBenchOptions& options,
                            const std::vector<OpResult>& ops, const PeakFigures& peak, int64_t threads);

}  // namespace tessera::bench
