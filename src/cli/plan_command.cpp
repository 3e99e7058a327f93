// `tessera plan`: the layout the performance model would choose for a run config on N ranks,
// with its predicted step time and memory beside data-parallel and spatial layouts.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "number_checks.hpp"
#include "simulator_run.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/json_reader.hpp"
#include "tessera/core/log.hpp"
#include "tessera/model/layer_entry.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/plan/layout_planner.hpp"
#include "tessera/plan/population_schedule.hpp"
#include "tessera/plan/step_schedule.hpp"
#include "tessera/train/auto_layout.hpp"
#include "tessera/train/ltfb/ltfb_options.hpp"
#include "tessera/train/training_run.hpp"

namespace tessera::cli {
namespace {

/// "16GiB", "512MiB", "2.5G", "1000000": bytes. Throws ConfigError naming the flag otherwise.
double parse_bytes(const std::string& text, const std::string& flag) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const double k = 1024.0;
  double scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  if (unit == "k" || unit == "kib" || unit == "kb") scale = k;
  if (unit == "m" || unit == "mib" || unit == "mb") scale = k * k;
  if (unit == "g" || unit == "gib" || unit == "gb") scale = k * k * k;
  if (unit == "t" || unit == "tib" || unit == "tb") scale = k * k * k * k;
  // At most an exbibyte: no rank has more, and byte counts derived from it stay within 64 bits.
  if (used == 0 || scale == 0 || !(value > 0) || !(value * scale <= k * k * k * k * k * k))
    throw ConfigError(flag, "expected a positive size of at most 1 EiB such as 16GiB or 512MiB, got \"" + text + "\"");
  return value * scale;
}

/// The config's training section with --batch-size and --precision applied: the global batch
/// and the types the plan prices activations and gradient sums in.
train::TrainingOptions training_of(ConfigObject& root, const PlanArgs& a) {
  const nlohmann::json none = nlohmann::json::object();
  auto training = root.has("training") ? root.object("training") : ConfigObject(none, "$.training");
  train::RunOverrides o;
  if (a.batch_size != 0) o.batch_size = a.batch_size;
  if (!a.precision.empty()) o.precision = a.precision;
  return train::TrainingRun::training_options(training, o);
}

/// --machine (or $TESSERA_MACHINE); a plan for one rank may do without one.
plan::MachineProfile machine_profile(PlanArgs& a) {
  if (a.machine.empty())
    if (const char* env = std::getenv("TESSERA_MACHINE"); env && *env) a.machine = env;
  if (!a.machine.empty()) return plan::read_machine_profile(a.machine);
  if (a.ranks > 1)
    throw ConfigError("--machine", "a plan for " + std::to_string(a.ranks) +
                                       " ranks needs a machine profile: measure this machine with `mpirun -np " +
                                       std::to_string(a.ranks) +
                                       " tessera calibrate --output machine.json` and pass --machine machine.json");
  return {};
}

/// What to plan for, from the flags and the run config; layer times are measured by every rank
/// of the job at once (rank 0 prints).
plan::PlanRequest plan_request(const PlanArgs& a, const nlohmann::json& config, const train::TrainingOptions& training,
                               const plan::MachineProfile& profile) {
  plan::PlanRequest request;
  request.ranks = a.ranks;
  request.batch = training.batch_size;
  request.precision = training.precision;
  request.gradient_precision = training.gradient_precision;
  request.allreduce_bucket_kb = training.allreduce_bucket_kb;
  request.backend = a.backend;
  request.threads = Kokkos::DefaultExecutionSpace().concurrency();
  request.optimizer_state = train::TrainingRun::optimizer_state_per_parameter(config);
  request.min_gain = a.min_gain;
  train::describe_data(config, request);
  if (config.contains("optimizer")) request.optimizer = config["optimizer"];
  if (!a.memory_limit.empty()) request.memory_limit = parse_bytes(a.memory_limit, "--memory-limit");
  request.measuring = parallel::Communicator::world();
  const int64_t per_node = std::min<int64_t>(a.ranks, std::max<int64_t>(1, profile.ranks_per_node));
  if (profile.origin != "published" && request.measuring.size() < per_node)
    log::warn("layer times are taken with " + std::to_string(request.measuring.size()) +
              " rank(s) busy, but training runs " + std::to_string(per_node) +
              " per node, which share its memory and caches: for times under the same load run `mpirun -np " +
              std::to_string(per_node) + " tessera plan ...`");
  request.on_measure = [no_measure = a.no_measure](const std::string& what) {
    if (no_measure) throw ConfigError("--no-measure", "the profile has no time for " + what);
    log::info("measuring " + what);
  };
  return request;
}

/// --given: the prediction for the layout the config states, as a plan of that one layout.
plan::Plan given_plan(const model::ModelSpec& spec, const plan::PlanRequest& request, plan::MachineProfile& profile) {
  plan::Plan plan;
  plan.ranks = request.ranks;
  plan.batch = request.batch;
  plan.chosen = plan::predict_model(spec, request, profile);
  plan.chosen.label = "given";
  plan.memory_limit = request.memory_limit > 0 ? request.memory_limit : profile.memory_per_rank;
  return plan;
}

/// --write-config: the run config with the planned distributions.
void write_planned_config(const std::string& path, model::ModelSpec& spec, const nlohmann::json& config,
                          const plan::Plan& plan) {
  plan::apply_layout(spec, plan.chosen);
  nlohmann::json out = config;
  auto& model = out["model"];
  model["distribution"] = model::spec::distribution_json(plan.chosen.layers.front().distribution);
  for (size_t i = 0; i < spec.layers.size(); ++i)
    model["layers"][i]["distribution"] = model::spec::distribution_json(*spec.layers[i].distribution);
  write_text_atomically(path, out.dump(2) + "\n");
  log::info("wrote " + path);
}

/// The gradient reducer's bucket in bytes of the gradient precision (Trainer: the bucket holds
/// allreduce_bucket_kb KiB of fp32 gradients).
double bucket_bytes(const train::TrainingOptions& t) {
  return static_cast<double>(t.allreduce_bucket_kb) * 1024 / 4 * static_cast<double>(element_size(t.gradient_precision));
}

std::string seconds_text(double s) { return format("%.4g s", s); }

/// What --schedule writes and --simulate replays: the chosen layout's step, or with several
/// trainers (--trainers, training.ltfb) a round of the population: round_steps steps of every
/// trainer and a pairwise tournament.
struct Replay {
  std::optional<plan::StepSchedule> step;
  std::optional<plan::PopulationSchedule> population;
  int64_t steps = 1;  // training steps the schedule holds
  void write(std::ostream& out) const { population ? population->write(out) : step->write(out); }
  int ranks() const { return population ? population->ranks() : step->ranks(); }
};

/// training.ltfb with --trainers over it; none for a single trainer.
std::optional<train::LtfbOptions> population_of(ConfigObject& root, const PlanArgs& a, int64_t batch) {
  const bool section = root.has("training") && root.object("training").has("ltfb");
  if (!section && a.trainers <= 1) return std::nullopt;
  const nlohmann::json none = nlohmann::json::object();
  auto cfg = section ? root.object("training").object("ltfb") : ConfigObject(none, "$.training.ltfb");
  train::LtfbOptions o = train::LtfbOptions::from_json(cfg, batch, a.trainers);
  if (o.trainers <= 1) return std::nullopt;
  if (o.selection == train::Selection::truncation)
    throw ConfigError("--trainers", "a population's round is scheduled for pairwise selection (or none), not truncation");
  return o;
}

/// --simulate: the schedule replayed by tessera-sim on the platform, printed beside the plan's
/// prediction (per training step; a population's round divided by its steps); the result goes
/// into the plan's JSON.
nlohmann::json simulate(const PlanArgs& a, const Replay& replay, const plan::Plan& plan, const std::string& simulator) {
  // With --schedule the file is there already; otherwise the schedule goes to a scratch file.
  std::string path = a.schedule;
  std::optional<ScratchFile> scratch;
  if (path.empty()) {
    path = scratch.emplace((std::filesystem::temp_directory_path() /
                            ("tessera-schedule-" + std::to_string(::getpid()) + ".txt")).string())
               .path();
    std::ofstream out(path);
    replay.write(out);
    if (!out) throw IoError(path + ": cannot write the step schedule");
  }
  nlohmann::json result = run_simulator(simulator, path, a.simulate, "--simulate");
  const double steps = static_cast<double>(replay.steps);
  const double simulated = result.at("step_seconds").get<double>() / steps, predicted = plan.chosen.step_time;
  std::ostringstream line;
  line << "simulated on " << result.at("platform").get<std::string>() << " (" << result.at("nodes").get<int64_t>()
       << " nodes, tessera-sim): ";
  if (replay.population)
    line << replay.population->trainers() << " trainers, a round of " << replay.steps << " steps and a tournament "
         << seconds_text(result.at("step_seconds").get<double>()) << ", per step ";
  else
    line << "step ";
  line << seconds_text(simulated) << " against the plan's " << seconds_text(predicted) << " (simulated / planned "
       << std::fixed << std::setprecision(3) << simulated / predicted << "); compute "
       << seconds_text(result.at("compute_seconds").get<double>() / steps) << ", waiting for messages "
       << seconds_text(result.at("waiting_seconds").get<double>() / steps) << "\n";
  std::cout << line.str() << std::flush;
  if (replay.population) {
    result["round_seconds"] = result.at("step_seconds");
    result["round_steps"] = replay.steps;
    result["trainers"] = replay.population->trainers();
    result["step_seconds"] = simulated;
  }
  return result;
}

}  // namespace

CLI::App* add_plan_command(CLI::App& app, PlanArgs& a) {
  auto* cmd = app.add_subcommand(
      "plan",
      "Choose every layer's distribution for a run config on N ranks with the calibrated performance model "
      "(docs/plan.md): each layer weighed under every split of the ranks it accepts (samples, depth/height/width, "
      "channel/filter), its compute measured on this machine on the block it would get, its communication from the "
      "machine profile's alpha-beta costs, its memory counted; the fastest layout within the memory limit found "
      "exactly. Prints per layer the distribution, compute, communication and memory, then the totals beside pure "
      "data-parallel and spatial layouts. Layer times missing from the profile are measured now and saved into it: "
      "launch it as training will run, with the ranks of one node and their threads, e.g. OMP_NUM_THREADS=1 mpirun "
      "-np 2 tessera plan CONFIG --ranks 2 --machine machine.json on 2 cores, so the times include the ranks' "
      "contention (every rank measures, rank 0 prints).");
  cmd->add_option("config", a.config, "Run config (JSON); its model is planned")->required()->check(CLI::ExistingFile);
  cmd->add_option("--ranks", a.ranks, "Ranks to plan for")->required()->check(integer_in(1, 1 << 20));
  cmd->add_option("--machine", a.machine,
                  "Machine profile (from `tessera calibrate`, or a published one such as share/tessera/machines/"
                  "theta.json; default: $TESSERA_MACHINE); needed for more than one rank");
  cmd->add_option("--memory-limit", a.memory_limit,
                  "Memory per rank, e.g. 16GiB (default: the profile's memory_per_rank)");
  cmd->add_option("--batch-size", a.batch_size, "Global batch (default: training.batch_size)")
      ->check(integer_in(train::TrainingLimits::batch_size));
  cmd->add_option("--backend", a.backend, "Op backend the model runs with (as for train)")->capture_default_str();
  cmd->add_option("--precision", a.precision,
                  "The type activations are computed in (default: training.precision): layer times are measured in "
                  "it, and activations, halos and channel exchanges priced at its bytes (docs/precision.md)");
  cmd->add_flag("--given", a.given,
                "Predict the layout the config states (its distributions) instead of searching for one");
  cmd->add_option("--json", a.json, "Also write the plan as JSON to this file");
  cmd->add_option("--write-config", a.write_config,
                  "Write the run config with the planned distributions to this file (train it with tessera train)");
  cmd->add_option("--min-gain", a.min_gain,
                  "Keep data parallelism unless the fastest layout is predicted faster by more than this fraction "
                  "(a layout change that gains less than the model's error is a guess)")
      ->capture_default_str()
      ->check(real_in(0.0, 1.0));
  cmd->add_option("--schedule", a.schedule,
                  "Write the chosen layout's training step as a schedule for tessera-sim: per rank its compute "
                  "phases, halo messages, collectives and gradient buckets (docs/simulation.md)");
  cmd->add_option("--simulate", a.simulate,
                  "Replay the chosen layout's step with tessera-sim (SimGrid) on this platform file, e.g. "
                  "share/tessera/platforms/sierra.json, and print the simulated step beside the planned one")
      ->check(CLI::ExistingFile);
  cmd->add_option("--trainers", a.trainers,
                  "With --schedule or --simulate: a population of this many trainers (LTFB), each of --ranks ranks "
                  "in the planned layout; the schedule holds one round (training.ltfb's round_steps steps, then a "
                  "pairwise tournament exchanging the models) over trainers x ranks ranks (docs/simulation.md)")
      ->check(integer_in(1, 1 << 20));
  cmd->add_flag("--no-measure", a.no_measure,
                "Measure no layer: fail if the profile lacks a time the plan needs (for published profiles, whose "
                "layers are not measured here, the roofline of the profile is used instead)");
  return cmd;
}

int run_plan(PlanArgs& a) {
  if (!a.json.empty()) require_writable_location(a.json, "--json (the plan)");
  if (!a.write_config.empty()) require_writable_location(a.write_config, "--write-config (the planned run config)");
  if (!a.schedule.empty()) require_writable_location(a.schedule, "--schedule (the step schedule)");
  const std::string simulator = a.simulate.empty() ? "" : find_simulator("--simulate");
  nlohmann::json config = read_json_file(a.config);
  ConfigObject root(config, "$");
  auto model_cfg = root.object("model");
  model::ModelSpec spec = model::ModelSpec::from_json(model_cfg);
  const train::TrainingOptions training = training_of(root, a);
  const std::optional<train::LtfbOptions> population = population_of(root, a, training.batch_size);
  if (population && a.schedule.empty() && a.simulate.empty())
    log::info("a population of " + std::to_string(population->trainers) + " trainers: the plan is one trainer's (" +
              std::to_string(a.ranks) + " ranks); --schedule or --simulate replays the population's round");
  plan::MachineProfile profile = machine_profile(a);
  const plan::PlanRequest request = plan_request(a, config, training, profile);
  if (spec.distribution_auto) spec.distribution.reset();

  const plan::Plan plan = a.given ? given_plan(spec, request, profile) : plan::plan_model(spec, request, profile);
  const bool first = parallel::Communicator::world().rank() == 0;
  if (first && !a.machine.empty() && profile.layer_times.size() > 0) plan::write_machine_profile(profile, a.machine);
  if (!plan.chosen.valid) throw ConfigError(a.config, plan.chosen.why);
  Replay replay;
  if (!a.schedule.empty() || !a.simulate.empty()) {
    replay.step.emplace(plan::schedule_layout(spec, request, profile, plan.chosen, bucket_bytes(training)));
    if (population) {
      replay.steps = population->round_steps;
      const double tournament =
          population->selection == train::Selection::none
              ? 0.0
              : static_cast<double>(population->tournament_samples) / static_cast<double>(training.batch_size);
      replay.population.emplace(*replay.step, static_cast<int>(population->trainers), population->round_steps,
                                tournament, population->selection != train::Selection::none);
    }
  }
  if (!first) return plan.feasible ? 0 : 3;
  if (request.precision != ElementType::fp32 || request.gradient_precision != ElementType::fp32)
    std::cout << "precision: activations " << element_type_name(request.precision) << ", gradient sums "
              << element_type_name(request.gradient_precision) << " (layer times measured and bytes priced so)\n";
  std::cout << plan::plan_table(plan) << std::flush;
  if (!a.schedule.empty()) {
    std::ostringstream text;
    replay.write(text);
    write_text_atomically(a.schedule, text.str());
    log::info("wrote the step schedule of " + std::to_string(replay.ranks()) + " ranks to " + a.schedule);
  }
  nlohmann::json out = plan::plan_json(plan);
  if (!a.simulate.empty()) out["simulation"] = simulate(a, replay, plan, simulator);
  if (!a.json.empty()) write_text_atomically(a.json, out.dump(2) + "\n");
  if (!a.write_config.empty()) write_planned_config(a.write_config, spec, config, plan);
  return plan.feasible ? 0 : 3;
}

}  // namespace tessera::cli
