// tessera-sim: replays a Tessera training step schedule (`tessera plan --schedule`) on a
// modelled machine with SimGrid, and prints the simulated step time (docs/simulation.md).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "platform.hpp"
#include "rank_replay.hpp"
#include "schedule_file.hpp"

namespace {

namespace sg4 = simgrid::s4u;
using tessera::sim::RankRecord;

constexpr const char* kUsage =
    "Usage: tessera-sim SCHEDULE --platform FILE [--json FILE]\n"
    "\n"
    "Replays a training step schedule written by `tessera plan --schedule` on the machine a\n"
    "platform file describes (share/tessera/platforms/*.json), with SimGrid's flow-level network\n"
    "model: every halo message, collective step and gradient bucket of every rank crosses the\n"
    "modelled links and switches, sharing them with the traffic that overlaps it. Computation\n"
    "takes the schedule's seconds. Prints the simulated step time beside the planner's.\n"
    "\n"
    "  SCHEDULE         the schedule file\n"
    "  --platform FILE  the machine's network (docs/simulation.md, \"Platforms\")\n"
    "  --json FILE      also write the result as JSON\n"
    "  -h, --help       this text\n";

struct Args {
  std::string schedule, platform, json;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    const auto value = [&](const char* flag) {
      if (k + 1 >= argc) throw std::invalid_argument(std::string(flag) + " needs a value");
      return std::string(argv[++k]);
    };
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--platform") {
      a.platform = value("--platform");
    } else if (arg == "--json") {
      a.json = value("--json");
    } else if (!arg.empty() && arg[0] == '-') {
      throw std::invalid_argument("unknown option '" + arg + "'");
    } else if (a.schedule.empty()) {
      a.schedule = arg;
    } else {
      throw std::invalid_argument("one schedule at a time, got '" + a.schedule + "' and '" + arg + "'");
    }
  }
  if (a.schedule.empty()) throw std::invalid_argument("no schedule file given");
  if (a.platform.empty()) throw std::invalid_argument("--platform is required");
  return a;
}

/// Plain max-min sharing with the links' own latency and bandwidth: SimGrid's default model
/// scales both by factors fitted to TCP over Ethernet, which would blur the published figures
/// the platforms state.
void configure_network_model() {
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/latency-factor:1.0");
  sg4::Engine::set_config("network/bandwidth-factor:1.0");
  sg4::Engine::set_config("network/crosstraffic:0");
  // Thousands of ranks each with two small actors: a small stack each (the replay's calls are
  // shallow).
  sg4::Engine::set_config("contexts/stack-size:128");
}

nlohmann::json result_json(const tessera::sim::Schedule& s, const tessera::sim::Platform& p,
                           const std::vector<RankRecord>& records, double wall) {
  size_t slowest = 0;
  for (size_t r = 0; r < records.size(); ++r)
    if (records[r].finish > records[slowest].finish) slowest = r;
  const RankRecord& last = records[slowest];
  double mean = 0;
  for (const auto& r : records) mean += r.finish / static_cast<double>(records.size());
  nlohmann::json layers = nlohmann::json::array();
  for (size_t l = 0; l < s.layers.size(); ++l) layers.push_back({{"name", s.layers[l]}, {"seconds", last.layer_seconds[l + 1]}});
  const int nodes = (s.ranks + p.ranks_per_node - 1) / p.ranks_per_node;
  return {{"platform", p.name},
          {"label", s.label},
          {"ranks", s.ranks},
          {"nodes", nodes},
          {"step_seconds", last.finish},
          {"slowest_rank", slowest},
          {"mean_rank_seconds", mean},
          {"compute_seconds", last.compute},
          {"waiting_seconds", last.finish - last.compute},
          {"step_work_seconds", last.layer_seconds[0]},
          {"predicted_step_seconds", s.predicted_step},
          {"measured_step_seconds", s.measured_step},
          {"layers", layers},
          {"simulation_wall_seconds", wall}};
}

const char* op_name(tessera::sim::OpKind k) {
  switch (k) {
    case tessera::sim::OpKind::compute: return "compute";
    case tessera::sim::OpKind::exchange: return "exchange";
    case tessera::sim::OpKind::allreduce: return "allreduce";
    case tessera::sim::OpKind::allreduce_start: return "iar";
    case tessera::sim::OpKind::wait_all: return "wait";
    case tessera::sim::OpKind::allgather: return "allgather";
    case tessera::sim::OpKind::reduce_scatter: return "reduce-scatter";
    case tessera::sim::OpKind::alltoall: return "alltoall";
  }
  return "?";
}

/// A replay that stopped with ranks still waiting: the schedule's messages or collectives do
/// not match between ranks. Names the first ranks stuck and where.
void check_finished(const tessera::sim::Schedule& s, const std::vector<RankRecord>& records) {
  std::string stuck;
  int count = 0;
  for (size_t r = 0; r < records.size(); ++r) {
    if (records[r].finished) continue;
    if (++count > 4) continue;
    const auto& ops = s.ops[r];
    const size_t k = records[r].next;
    stuck += "\n  rank " + std::to_string(r) + ": operation " + std::to_string(k + 1) + " of " + std::to_string(ops.size());
    if (k < ops.size()) {
      stuck += std::string(" (") + op_name(ops[k].kind);
      if (ops[k].layer >= 0) stuck += " of layer " + s.layers[static_cast<size_t>(ops[k].layer)];
      stuck += ")";
    }
  }
  if (count > 0)
    throw std::runtime_error("the replay stopped with " + std::to_string(count) +
                             " rank(s) waiting for messages no rank sends: the schedule's exchanges or collectives "
                             "do not match between ranks" + stuck);
}

int simulate(const Args& a, char* program) {
  const tessera::sim::Schedule schedule = tessera::sim::read_schedule(a.schedule);
  // SimGrid reads its own options from the command line: it gets none of ours, and logs only
  // warnings and errors (a deadlock: its engine's line, then check_finished's, which names the
  // ranks and layers that wait).
  std::vector<char*> engine_argv{program, const_cast<char*>("--log=root.thres:warning"),
                                 const_cast<char*>("--log=xbt_cfg.thres:warning")};
  int engine_argc = static_cast<int>(engine_argv.size());
  sg4::Engine engine(&engine_argc, engine_argv.data());
  configure_network_model();
  const tessera::sim::Platform platform = tessera::sim::build_platform(a.platform);
  if (schedule.ranks_per_node != platform.ranks_per_node)
    throw std::runtime_error(a.schedule + " was planned with " + std::to_string(schedule.ranks_per_node) +
                             " rank(s) per node, but " + a.platform + " places " + std::to_string(platform.ranks_per_node) +
                             ": plan with a machine profile of the same ranks_per_node");
  const int64_t capacity = platform.nodes() * platform.ranks_per_node;
  if (schedule.ranks > capacity)
    throw std::runtime_error(a.schedule + " has " + std::to_string(schedule.ranks) + " ranks, but " + a.platform + " holds " +
                             std::to_string(capacity) + " (" + std::to_string(platform.nodes()) + " nodes of " +
                             std::to_string(platform.ranks_per_node) + ")");
  std::vector<RankRecord> records(static_cast<size_t>(schedule.ranks));
  for (int r = 0; r < schedule.ranks; ++r)
    sg4::Actor::create("rank-" + std::to_string(r), platform.host_of(r),
                       [&schedule, &records, &platform, r] {
                         tessera::sim::replay_rank(schedule, r, platform, records[static_cast<size_t>(r)]);
                       });
  const auto start = std::chrono::steady_clock::now();
  engine.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  check_finished(schedule, records);
  const nlohmann::json result = result_json(schedule, platform, records, wall);
  std::cout << "simulated " << schedule.ranks << " ranks on " << result["nodes"] << " nodes of " << platform.name
            << " (" << schedule.label << "): step " << result["step_seconds"].get<double>() << " s (compute "
            << result["compute_seconds"].get<double>() << " s, waiting " << result["waiting_seconds"].get<double>()
            << " s), " << (schedule.measured_step > 0 ? "measured " : "planner ")
            << (schedule.measured_step > 0 ? schedule.measured_step : schedule.predicted_step) << " s; " << wall
            << " s to simulate\n";
  if (!a.json.empty()) {
    const std::string partial = a.json + ".partial";
    std::ofstream out(partial);
    out << result.dump(2) << "\n";
    out.close();
    if (!out || std::rename(partial.c_str(), a.json.c_str()) != 0)
      throw std::runtime_error("cannot write " + a.json);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    args = parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << "tessera-sim: " << e.what() << "\n\n" << kUsage;
    return 2;
  }
  try {
    return simulate(args, argv[0]);
  } catch (const std::exception& e) {
    std::cerr << "tessera-sim: error: " << e.what() << "\n";
    return 1;
  }
}
