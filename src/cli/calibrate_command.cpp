// `tessera calibrate`: measures this machine for the performance model (docs/machine_profile.md):
// each rank's memory bandwidth and FMA peak with all ranks busy, and the α and β of MPI's
// collectives at every rank count of the job, fitted to the formulas plan::LinkCost states.
#include <mpi.h>
#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "commands.hpp"
#include "tessera/bench/machine_description.hpp"
#include "tessera/bench/peak_measure.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/memory_capacity.hpp"
#include "tessera/model/model.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/plan/collective_fit.hpp"
#include "tessera/plan/machine_profile.hpp"

namespace tessera::cli {
namespace {

using plan::Collective;
constexpr Collective kCollectives[] = {Collective::point_to_point, Collective::allreduce, Collective::allgather,
                                       Collective::alltoall, Collective::reduce_scatter};

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

/// This process's resident memory (VmRSS of /proc/self/status) in bytes; 0 where there is none.
double resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024.0;  // "VmRSS:  123 kB"
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Every rank's `value`, in rank order.
std::vector<double> gather_all(double value, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<double> all(static_cast<size_t>(size));
  parallel::check_mpi(MPI_Allgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm), "MPI_Allgather");
  return all;
}

/// How long and how often: --quick trades accuracy for a run of seconds.
struct Effort {
  std::vector<double> sizes;  // message sizes n (bytes, as LinkCost defines n)
  int warmup, reps;
  double fma_seconds;
  int peak_repeats;
  int64_t triad_bytes;
};

Effort effort(bool quick) {
  if (quick) return {{8, 64 << 10, 1 << 20}, 1, 3, 0.02, 2, 3 << 23};
  return {{8, 1 << 10, 64 << 10, 1 << 20, 4 << 20}, 2, 7, 0.1, 5, 3 << 27};
}

/// Calls of one timing: small messages repeated so that the timer's resolution and the barrier
/// before them do not decide the figure.
int calls_per_timing(double bytes, bool quick) {
  if (bytes <= 1024) return quick ? 10 : 50;
  if (bytes <= 65536) return quick ? 3 : 10;
  return 1;
}

/// Seconds of one call of `c` with `bytes` (n as LinkCost defines it) over `comm`: the slowest
/// rank's, the median of `reps` timings after `warmup`. Point-to-point is a ping-pong between
/// the group's first and last rank (half the round trip); the others wait.
double time_collective(Collective c, double bytes, MPI_Comm comm, const Effort& e, bool quick, std::vector<char>& send,
                       std::vector<char>& recv) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const int n = static_cast<int>(bytes);
  const int floats = std::max(1, n / 4);
  const int per_peer = std::max(1, n / p);  // alltoall: what one rank sends each other rank
  const size_t need = static_cast<size_t>(p) * static_cast<size_t>(std::max(n, 4)) + 64;
  // Zeros: the reductions then stay clear of denormal and infinite floats, which run slower.
  if (send.size() < need) send.assign(need, 0), recv.assign(need, 0);
  const auto call = [&] {
    switch (c) {
      case Collective::point_to_point:
        if (rank == 0) {
          MPI_Send(send.data(), n, MPI_BYTE, p - 1, 0, comm);
          MPI_Recv(recv.data(), n, MPI_BYTE, p - 1, 0, comm, MPI_STATUS_IGNORE);
        } else if (rank == p - 1) {
          MPI_Recv(recv.data(), n, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
          MPI_Send(send.data(), n, MPI_BYTE, 0, 0, comm);
        }
        return;
      case Collective::allreduce:
        parallel::check_mpi(MPI_Allreduce(MPI_IN_PLACE, recv.data(), floats, MPI_FLOAT, MPI_SUM, comm),
                            "MPI_Allreduce");
        return;
      case Collective::allgather:
        parallel::check_mpi(MPI_Allgather(send.data(), n, MPI_BYTE, recv.data(), n, MPI_BYTE, comm), "MPI_Allgather");
        return;
      case Collective::alltoall:
        parallel::check_mpi(MPI_Alltoall(send.data(), per_peer, MPI_BYTE, recv.data(), per_peer, MPI_BYTE, comm),
                            "MPI_Alltoall");
        return;
      case Collective::reduce_scatter:
        parallel::check_mpi(MPI_Reduce_scatter_block(send.data(), recv.data(), floats, MPI_FLOAT, MPI_SUM, comm),
                            "MPI_Reduce_scatter_block");
        return;
    }
  };
  const int calls = calls_per_timing(bytes, quick);
  for (int w = 0; w < e.warmup; ++w) call();
  std::vector<double> times;
  for (int r = 0; r < e.reps; ++r) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    for (int k = 0; k < calls; ++k) call();
    double t = (MPI_Wtime() - t0) / calls;
    if (c == Collective::point_to_point) t /= 2;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    times.push_back(t);
  }
  return median(times);
}

/// n as LinkCost defines it for the message the timing really sent (alltoall rounds the
/// per-peer share down to whole bytes).
double sent_bytes(Collective c, double bytes, int p) {
  if (c == Collective::alltoall) return static_cast<double>(std::max(1, static_cast<int>(bytes) / p)) * p;
  if (c == Collective::allreduce || c == Collective::reduce_scatter)
    return 4.0 * std::max(1, static_cast<int>(bytes) / 4);
  return bytes;
}

/// Where this job's ranks live: the first node's size, the number of nodes, and for each
/// rank count p whether the first p ranks share a node.
struct Placement {
  int ranks_on_first_node = 1, nodes = 1;
  std::vector<int> node_of;  // per world rank: the lowest world rank on its node
};

Placement placement(MPI_Comm world) {
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm node;
  parallel::check_mpi(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
                      "MPI_Comm_split_type");
  int leader = rank;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  Placement pl;
  for (const double l : gather_all(leader, world)) pl.node_of.push_back(static_cast<int>(l));
  pl.nodes = static_cast<int>(std::set<int>(pl.node_of.begin(), pl.node_of.end()).size());
  pl.ranks_on_first_node = static_cast<int>(std::count(pl.node_of.begin(), pl.node_of.end(), pl.node_of[0]));
  return pl;
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

void print_summary(const plan::MachineProfile& p) {
  log::info("machine profile '" + p.name + "': " + p.description);
  log::info("  per rank (" + std::to_string(p.threads_per_rank) + " thread(s), " + std::to_string(p.ranks_per_node) +
            " rank(s) per node): peak " + format("%.1f", p.peak_flops_per_rank / 1e9) + " GFLOP/s, memory bandwidth " +
            format("%.1f", p.memory_bandwidth_per_rank / 1e9) + " GB/s, memory " + human_bytes(p.memory_per_rank) +
            ", process baseline " + human_bytes(p.process_baseline));
  if (p.within_node.empty() && p.across_nodes.empty()) {
    log::info("  collectives: none measured (one rank): plans for more ranks need a profile from mpirun -np N");
    return;
  }
  log::info("  collective       where          alpha (us)   1/beta (GB/s)");
  for (const auto* links : {&p.within_node, &p.across_nodes})
    for (const auto& [c, l] : *links) {
      char line[160];
      std::snprintf(line, sizeof line, "  %-16s %-13s %11.2f %15.2f", plan::collective_name(c),
                    links == &p.within_node ? "within node" : "across nodes", l.alpha * 1e6,
                    l.beta > 0 ? 1e-9 / l.beta : INFINITY);
      log::info(line);
    }
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
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--threads", a.threads,
                  "Threads per rank for the bandwidth and peak measurements (default: the threads Kokkos runs "
                  "with); the profile's threads_per_rank")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
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
  const MPI_Comm world = parallel::Communicator::world().handle();
  const bool mpi = world != MPI_COMM_NULL;
  int rank = 0, size = 1;
  if (mpi) {
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
  }
  // Refusals before any measurement, the same on every rank; rank 0 says why.
  std::string problem;
  std::optional<plan::MachineProfile> previous;
  try {
    require_writable_location(a.output, "--output");
    previous = existing_profile(a.output);
  } catch (const Error& e) {
    problem = e.what();
  }
  if (mpi) {
    int failed = problem.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, world);
    if (failed != 0) {
      if (!problem.empty() && rank == 0) log::error(problem);
      if (problem.empty() && rank == 0) log::error("--output " + a.output + ": another rank cannot write it");
      return 1;
    }
  } else if (!problem.empty()) {
    log::error(problem);
    return 1;
  }

  const Effort e = effort(a.quick);
  const int64_t threads = a.threads > 0 ? a.threads : Kokkos::DefaultHostExecutionSpace().concurrency();
  const bench::MachineDescription machine = bench::MachineDescription::probe();
  const Placement pl = mpi ? placement(world) : Placement{1, 1, {0}};
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

  log::info("calibrate: " + std::to_string(size) + " rank(s) of " + std::to_string(threads) + " thread(s) on " +
            std::to_string(pl.nodes) + " node(s); " + machine.cpu_model);
  // The share of one rank when every rank works: all ranks measure at the same time.
  const int64_t triad_bytes = std::max<int64_t>(
      24 << 20, std::min<int64_t>(e.triad_bytes, static_cast<int64_t>(p.memory_per_rank / 4) / 24 * 24));
  log::info("calibrate: memory bandwidth (STREAM triad, " + human_bytes(static_cast<double>(triad_bytes)) +
            " per rank) and FMA peak, all ranks at once");
  if (mpi) MPI_Barrier(world);
  const double gbs = bench::measure_triad_gbs(threads, triad_bytes, e.peak_repeats);
  if (mpi) MPI_Barrier(world);
  const double gflops = bench::measure_fma_gflops(threads, e.fma_seconds, e.peak_repeats);
  p.memory_bandwidth_per_rank = 1e9 * (mpi ? median(gather_all(gbs, world)) : gbs);
  p.peak_flops_per_rank = 1e9 * (mpi ? median(gather_all(gflops, world)) : gflops);
  // The rank that holds the most: a plan must leave room for it on every rank.
  const std::vector<double> baselines = mpi ? gather_all(baseline, world) : std::vector<double>{baseline};
  p.process_baseline = *std::max_element(baselines.begin(), baselines.end());

  const int max_ranks = static_cast<int>(std::min<int64_t>(size, a.ranks_max > 0 ? a.ranks_max : size));
  std::map<Collective, std::vector<plan::CollectiveSample>> within, across;
  std::vector<char> send, recv;
  for (int ranks = 2; ranks <= max_ranks; ++ranks) {
    const bool spans =
        std::any_of(pl.node_of.begin(), pl.node_of.begin() + ranks, [&](int node) { return node != pl.node_of[0]; });
    log::info("calibrate: collectives on " + std::to_string(ranks) + " ranks " +
              (spans ? "across nodes" : "within one node"));
    MPI_Comm group;
    parallel::check_mpi(MPI_Comm_split(world, rank < ranks ? 0 : MPI_UNDEFINED, rank, &group), "MPI_Comm_split");
    if (group != MPI_COMM_NULL) {
      for (Collective c : kCollectives)
        for (const double bytes : e.sizes) {
          const double t = time_collective(c, bytes, group, e, a.quick, send, recv);
          (spans ? across : within)[c].push_back({ranks, sent_bytes(c, bytes, ranks), t});
        }
      MPI_Comm_free(&group);
    }
    // The ranks outside the group wait here: nothing else may load the node while it measures.
    MPI_Barrier(world);
  }
  for (const auto& [c, samples] : within) p.within_node[c] = plan::fit_link_cost(c, samples);
  for (const auto& [c, samples] : across) p.across_nodes[c] = plan::fit_link_cost(c, samples);
  // The fit is non-negative least squares: a term at 0 means the timings did not resolve it
  // (on a busy node the small messages' spread exceeds their latency). The profile stays
  // usable (that term is then free in the plans), but the user should know.
  for (const auto* costs : {&p.within_node, &p.across_nodes})
    for (const auto& [c, cost] : *costs)
      if (cost.alpha == 0 || cost.beta == 0)
        log::warn(std::string(plan::collective_name(c)) + (costs == &p.within_node ? " within a node" : " across nodes") +
                  ": the timings did not resolve its " + (cost.alpha == 0 ? "latency (alpha)" : "bandwidth (beta)") +
                  ", fitted as 0; was the node busy? Calibrate again on a quiet node (without --quick for more "
                  "repetitions)");

  if (previous) {
    p.layer_times = previous->layer_times;
    p.backend = previous->backend;
    if (!p.layer_times.empty()) {
      log::info("calibrate: kept the " + std::to_string(p.layer_times.size()) + " measured layer time(s) of " +
                a.output);
      if (previous->threads_per_rank != p.threads_per_rank)
        log::warn("the kept layer times were measured with " + std::to_string(previous->threads_per_rank) +
                  " thread(s) per rank, this calibration used " + std::to_string(p.threads_per_rank));
    }
  }
  if (rank == 0) {
    plan::write_machine_profile(p, a.output);
    print_summary(p);
    log::info("machine profile written to " + a.output);
  }
  return 0;
}

}  // namespace tessera::cli
