#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "tessera/train/training_run.hpp"

namespace tessera::cli {

/// The flags of `tessera train --trace`.
struct TraceArgs {
  std::string file;
  int64_t steps = 5, skip = 8;
};

void add_trace_options(CLI::App* cmd, TraceArgs& a);

/// `tessera train --trace FILE`: records some of the run's steps as every rank ran them
/// (parallel::MpiTrace) and writes them as a step schedule that tessera-sim replays, beside
/// the planner's schedule of the same layout (docs/simulation.md, "A real run's trace").
/// Recording starts at construction; finish() writes the file (collective over the job).
class RunTrace {
 public:
  /// Throws when the run is too short for the steps asked for, or is not the whole job.
  RunTrace(const TraceArgs& args, train::TrainingRun& run, const std::string& config);
  ~RunTrace();
  RunTrace(const RunTrace&) = delete;
  RunTrace& operator=(const RunTrace&) = delete;
  void finish(bool quiet);

 private:
  TraceArgs args_;
  std::string label_;
  std::vector<std::string> layers_;
  bool recording_ = false;
};

}  // namespace tessera::cli
