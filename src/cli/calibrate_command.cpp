// `tessera calibrate`: measures this machine for the performance model (docs/machine_profile.md):
// each rank's memory bandwidth and FMA peak with all ranks busy, and the α and β of MPI's
// collectives at every rank count of the job, fitted to the formulas plan::LinkCost states
// (the timings are plan::time_collectives'; this command parses, sequences and reports).
#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "commands.hpp"
#include "number_checks.hpp"
#include "tessera/bench/machine_description.hpp"
#include "tessera/bench/peak_measure.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/memory_capacity.hpp"
#include "tessera/core/process_memory.hpp"
#include "tessera/core/statistics.hpp"
#include "tessera/model/model.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/plan/collective_timing.hpp"
#include "tessera/plan/machine_profile.hpp"
#include "tessera/plan/node_layout.hpp"

namespace tessera::cli {
namespace {

using parallel::Communicator;

/// How long the bandwidth and peak are measured: --quick trades accuracy for a run of seconds.
struct PeakEffort {
  double fma_seconds;
  int repeats;
  int64_t triad_bytes;
};

PeakEffort peak_effort(bool quick) {
  if (quick) return {0.02, 2, 3 << 23};
  return {0.1, 5, 3 << 27};
}

/// The profile already at --output, whose layer times a recalibration keeps; none when there
/// is no file. A file that is not a profile is refused: overwriting it could lose data.
std::optional<plan::MachineProfile> existing_profile(const std::string& output) {
  if (access(output.c_str(), F_OK) != 0) return std::nullopt;
  try {
    return plan::read_machine_profile(output);
  } catch (const Error& e) {
    throw ConfigError("--output " + output, std::string("exists and is not a machine profile (") + e.what() +
                                                "); remove it or choose another file");
  }
}

/// Refusals before any measurement, the same on every rank (rank 0 says why): false when some
/// rank cannot write --output. `previous` gets the profile already there.
bool output_accepted(const CalibrateArgs& a, const Communicator& world, std::optional<plan::MachineProfile>& previous) {
  std::string problem;
  try {
    require_writable_location(a.output, "--output");
    previous = existing_profile(a.output);
  } catch (const Error& e) {
    problem = e.what();
  }
  double failed = problem.empty() ? 0 : 1;
  world.allreduce_max(&failed, 1);
  if (failed == 0) return true;
  if (world.rank() == 0)
    log::error(problem.empty() ? "--output " + a.output + ": another rank cannot write it" : problem);
  return false;
}

/// The profile's description of this machine and its ranks, before anything is timed.
plan::MachineProfile describe_machine(const CalibrateArgs& a, int64_t threads, const bench::MachineDescription& machine,
                                      const plan::NodeLayout& pl) {
  const MemoryCapacity capacity = memory_capacity();
  plan::MachineProfile p;
  p.name = a.name.empty() ? machine.hostname : a.name;
  p.origin = "measured";
  p.threads_per_rank = threads;
  // A node holds as many ranks as it has CPUs for their threads (or GPUs for, one each), so a
  // plan for more ranks than that spans nodes and prices its collectives across them.
  const int64_t fit_on_node = capacity.devices > 0 ? capacity.devices : std::max<int64_t>(1, machine.cores / threads);
  p.ranks_per_node = pl.nodes > 1 ? pl.ranks_on_first_node : std::max<int64_t>(pl.ranks_on_first_node, fit_on_node);
  p.memory_per_rank = static_cast<double>(capacity.per_rank(static_cast<int>(p.ranks_per_node)));
  p.description = machine.cpu_model + ", " + std::to_string(machine.cores) + " logical CPUs; MPI " +
                  (pl.nodes > 1 ? "across " + std::to_string(pl.nodes) + " nodes" : std::string("within one node"));
  return p;
}

/// Each rank's memory bandwidth and FMA peak, all ranks at once (the median over ranks is
/// kept), and the largest process baseline of any rank: a plan must leave room for it on all.
void measure_ranks(plan::MachineProfile& p, const Communicator& world, const PeakEffort& e, double baseline) {
  // The share of one rank when every rank works: all ranks measure at the same time.
  const int64_t triad_bytes = std::max<int64_t>(
      24 << 20, std::min<int64_t>(e.triad_bytes, static_cast<int64_t>(p.memory_per_rank / 4) / 24 * 24));
  log::info("calibrate: memory bandwidth (STREAM triad, " + human_bytes(static_cast<double>(triad_bytes)) +
            " per rank) and FMA peak, all ranks at once");
  world.barrier();
  const double gbs = bench::measure_triad_gbs(p.threads_per_rank, triad_bytes, e.repeats);
  world.barrier();
  const double gflops = bench::measure_fma_gflops(p.threads_per_rank, e.fma_seconds, e.repeats);
  p.memory_bandwidth_per_rank = 1e9 * median(world.allgather(gbs));
  p.peak_flops_per_rank = 1e9 * median(world.allgather(gflops));
  const std::vector<double> baselines = world.allgather(baseline);
  p.process_baseline = *std::max_element(baselines.begin(), baselines.end());
}

/// The fit is non-negative least squares: a term at 0 means the timings did not resolve it (on
/// a busy node the small messages' spread exceeds their latency). The profile stays usable
/// (that term is then free in the plans), but the user should know.
void warn_unresolved(const plan::MachineProfile& p) {
  for (const auto* costs : {&p.within_node, &p.across_nodes})
    for (const auto& [c, cost] : *costs)
      if (cost.alpha == 0 || cost.beta == 0)
        log::warn(std::string(plan::collective_name(c)) +
                  (costs == &p.within_node ? " within a node" : " across nodes") +
                  ": the timings did not resolve its " + (cost.alpha == 0 ? "latency (alpha)" : "bandwidth (beta)") +
                  ", fitted as 0; was the node busy? Calibrate again on a quiet node (without --quick for more "
                  "repetitions)");
}

/// A recalibration keeps the layer times (and their backend) of the profile it replaces.
void keep_layer_times(plan::MachineProfile& p, const std::optional<plan::MachineProfile>& previous,
                      const std::string& output) {
  if (!previous) return;
  p.layer_times = previous->layer_times;
  p.backend = previous->backend;
  if (p.layer_times.empty()) return;
  log::info("calibrate: kept the " + std::to_string(p.layer_times.size()) + " measured layer time(s) of " + output);
  if (previous->threads_per_rank != p.threads_per_rank)
    log::warn("the kept layer times were measured with " + std::to_string(previous->threads_per_rank) +
              " thread(s) per rank, this calibration used " + std::to_string(p.threads_per_rank));
}

void print_summary(const plan::MachineProfile& p) {
  log::info("machine profile '" + p.name + "': " + p.description);
  log::info("  per rank (" + std::to_string(p.threads_per_rank) + " thread(s), " + std::to_string(p.ranks_per_node) +
            " rank(s) per node): peak " + fixed(p.peak_flops_per_rank / 1e9, 1) + " GFLOP/s, memory bandwidth " +
            fixed(p.memory_bandwidth_per_rank / 1e9, 1) + " GB/s, memory " + human_bytes(p.memory_per_rank) +
            ", process baseline " + human_bytes(p.process_baseline));
  if (p.within_node.empty() && p.across_nodes.empty()) {
    log::info("  collectives: none measured (one rank): plans for more ranks need a profile from mpirun -np N");
    return;
  }
  log::info("  collective       where          alpha (us)   1/beta (GB/s)");
  for (const auto* links : {&p.within_node, &p.across_nodes})
    for (const auto& [c, l] : *links)
      log::info(format("  %-16s %-13s %11.2f %15.2f", plan::collective_name(c),
                       links == &p.within_node ? "within node" : "across nodes", l.alpha * 1e6,
                       l.beta > 0 ? 1e-9 / l.beta : INFINITY));
  if (p.across_nodes.empty())
    log::info("  across nodes: not measured (the job ran on one node); plans for more than " +
              std::to_string(p.ranks_per_node) + " ranks need a profile measured over several nodes");
}

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& a) {
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Measure this machine for the performance model (`tessera plan`, \"distribution\": \"auto\") and write "
      "its machine profile: launch as `mpirun -np N tessera calibrate --output machine.json`. Every rank "
      "measures its memory bandwidth (STREAM triad) and FMA peak at the same time (the median over ranks is "
      "kept); then MPI point-to-point, allreduce, allgather, alltoall and reduce_scatter are timed over the "
      "first p ranks for every p from 2 to N (or --ranks-max), from 8 bytes to 4 MiB, and the latency alpha "
      "and inverse bandwidth beta of each are fitted. With one rank there is nothing to time: the profile has "
      "no collectives and plans for more ranks refuse it. Costs across nodes are measured only when the job "
      "spans nodes. If --output is already a machine profile, its measured layer times (and their backend) "
      "are kept: recalibrating does not throw them away. See docs/machine_profile.md.");
  cmd->add_option("-o,--output", a.output, "The machine profile to write (JSON)")->required();
  cmd->add_option("--name", a.name, "The profile's name (default: this host's name)");
  cmd->add_option("--ranks-max", a.ranks_max,
                  "Time collectives on at most this many ranks (default: all ranks of the job)")
      ->check(integer_in(1, 1 << 20));
  cmd->add_option("--threads", a.threads,
                  "Threads per rank for the bandwidth and peak measurements (default: the threads Kokkos runs "
                  "with); the profile's threads_per_rank")
      ->check(integer_in(1, 4096));
  cmd->add_flag("--quick", a.quick,
                "Fewer message sizes (8 B, 64 KiB, 1 MiB), repetitions and shorter peak timings: a rough "
                "profile in seconds, for tests");
  return cmd;
}

/// Runs one step of a tiny model (every kind of op the backends provide), so the baseline
/// includes what a run holds before its first tensor of any size: the op libraries' code and
/// just-in-time kernels, the threads' stacks. Its own tensors are a few hundred KiB.
void warm_up_runtime() {
  nlohmann::json spec = nlohmann::json::parse(R"({
    "input": {"channels": 2, "size": [8, 8, 8]},
    "layers": [
      {"name": "conv", "type": "conv3d", "filters": 4, "kernel": 3, "padding": 1},
      {"name": "bn", "type": "batch_norm"},
      {"name": "act", "type": "relu"},
      {"name": "pool", "type": "max_pool3d", "kernel": 2},
      {"name": "flatten", "type": "flatten"},
      {"name": "out", "type": "dense", "units": 2}]})");
  ConfigObject cfg(spec, "calibrate warm-up model");
  model::BuildOptions options;
  options.group = parallel::Communicator::self();
  auto model = model::Model::from_json(cfg, options);
  Tensor input(Shape{2, 8, 8, 8, 2}, "warm_up_input");
  input.fill(0.5f);
  layers::StepInfo step;
  step.batch = 2;
  const Tensor& out = model->forward(input, step);
  Tensor grad(out.shape(), "warm_up_grad");
  grad.fill(0.1f);
  model->backward(grad, step);
  Kokkos::fence();
}

int run_calibrate(CalibrateArgs& a) {
  // What every rank holds with no model, once the runtime has run one: the baseline the
  // planner adds to a layout's tensors.
  warm_up_runtime();
  const double baseline = resident_bytes();
  const Communicator world = Communicator::world();
  std::optional<plan::MachineProfile> previous;
  if (!output_accepted(a, world, previous)) return 1;

  const int64_t threads = a.threads > 0 ? a.threads : Kokkos::DefaultHostExecutionSpace().concurrency();
  const bench::MachineDescription machine = bench::MachineDescription::probe();
  const plan::NodeLayout pl = plan::NodeLayout::of(world);
  plan::MachineProfile p = describe_machine(a, threads, machine, pl);
  log::info("calibrate: " + std::to_string(world.size()) + " rank(s) of " + std::to_string(threads) + " thread(s) on " +
            std::to_string(pl.nodes) + " node(s); " + machine.cpu_model);
  measure_ranks(p, world, peak_effort(a.quick), baseline);

  const int max_ranks = static_cast<int>(std::min<int64_t>(world.size(), a.ranks_max > 0 ? a.ranks_max : world.size()));
  const plan::CollectiveTimings timings =
      plan::time_collectives(world, pl, max_ranks, plan::TimingEffort::of(a.quick), [](int ranks, bool spans) {
        log::info("calibrate: collectives on " + std::to_string(ranks) + " ranks " +
                  (spans ? "across nodes" : "within one node"));
      });
  plan::fit_collectives(timings, p);
  warn_unresolved(p);
  keep_layer_times(p, previous, a.output);
  if (world.rank() == 0) {
    plan::write_machine_profile(p, a.output);
    print_summary(p);
    log::info("machine profile written to " + a.output);
  }
  return 0;
}

}  // namespace tessera::cli
