#include "run_trace.hpp"

#include "number_checks.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/mpi_trace.hpp"
#include "tessera/parallel/node_ranks.hpp"
#include "tessera/plan/traced_schedule.hpp"

namespace tessera::cli {

void add_trace_options(CLI::App* cmd, TraceArgs& a) {
  cmd->add_option("--trace", a.file,
                  "Record --trace-steps steps as every rank runs them (its MPI operations with peers, groups and "
                  "bytes, and the compute between them per layer) and write them as a step schedule that "
                  "tessera-sim replays (docs/simulation.md, \"A real run's trace\")");
  cmd->add_option("--trace-steps", a.steps, "Steps --trace records (default 5; each operation's median is written)")
      ->check(integer_in(1, 1000));
  cmd->add_option("--trace-skip", a.skip,
                  "Steps of this process left out before --trace records (default 8: warm-up, and the 7 steps in "
                  "which an overlapped convolution measures whether to overlap)")
      ->check(integer_in(0, 1 << 30));
}

RunTrace::RunTrace(const TraceArgs& args, train::TrainingRun& run, const std::string& config) : args_(args) {
  const auto world = parallel::Communicator::world();
  const int64_t steps = run.trainer().last_step();
  if (steps < args_.skip + args_.steps)
    throw ConfigError("--trace", "the run takes " + std::to_string(steps) + " steps, but the trace leaves out " +
                                     std::to_string(args_.skip) + " and records " + std::to_string(args_.steps) +
                                     ": raise --max-steps or --epochs, or lower --trace-skip or --trace-steps");
  for (size_t i = 0; i < run.model().num_layers(); ++i) layers_.push_back(run.model().layer(i).name());
  label_ = "trace of " + config + " on " + std::to_string(world.size()) + " rank(s), steps " +
           std::to_string(args_.skip + 1) + "-" + std::to_string(args_.skip + args_.steps);
  parallel::MpiTrace::Options options;
  options.skip_steps = args_.skip;
  options.steps = args_.steps;
  options.layers = layers_;
  parallel::MpiTrace::start(options);
  recording_ = true;
}

RunTrace::~RunTrace() {
  if (recording_) {
    try {
      parallel::MpiTrace::finish();
    } catch (...) {  // the run already failed; its error is the one to report
    }
  }
}

void RunTrace::finish(bool quiet) {
  recording_ = false;
  const parallel::TracedSteps steps = parallel::MpiTrace::finish();
  const auto world = parallel::Communicator::world();
  plan::ScheduleHeader header;
  header.ranks_per_node = parallel::ranks_on_this_node(world);
  header.label = label_;
  header.layers = layers_;
  const plan::TraceSummary s = plan::write_traced_schedule(args_.file, steps, header, world);
  if (!quiet)
    log::info("trace: " + std::to_string(s.steps) + " step(s) of " + std::to_string(world.size()) + " rank(s), " +
              std::to_string(s.operations) + " operations, step " + format("%.4f", s.step_seconds) + " s (" +
              (s.op_medians ? "each operation's median" : "the median step: the steps' operations differ") +
              ") written to " + args_.file);
}

}  // namespace tessera::cli
