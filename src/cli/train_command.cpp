#include <cstdlib>

#include "commands.hpp"
#include "number_checks.hpp"
#include "tessera/build_info.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/json_reader.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/stop_request.hpp"
#include "tessera/ffn/ffn_run.hpp"
#include "tessera/parallel/batch_job.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/placement_check.hpp"
#include "tessera/parallel/rank_placement.hpp"
#include "tessera/registry/backend_registry.hpp"
#include "tessera/train/ltfb/population_run.hpp"
#include "tessera/train/metrics_log.hpp"

namespace tessera::cli {

namespace {

/// `word` as a shell reads it back: bare when it is plain, else in single quotes.
std::string shell_quoted(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-_./=:,+@%") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// `path` with ".from-step-N" before its extension: the resumed run's own metrics log, since
/// a run rewrites its log from the start.
std::string metrics_from_step(const std::string& path, int64_t step) {
  return train::log_beside(path, ".from-step-" + std::to_string(step));
}

/// The command that continues a stopped run: the same one, resuming from `checkpoint` at
/// `step`, with a metrics log of its own.
std::string resume_command(const std::vector<std::string>& command_line, const std::string& checkpoint, int64_t step) {
  std::string command;
  auto add = [&](const std::string& word) { command += (command.empty() ? "" : " ") + shell_quoted(word); };
  for (size_t i = 0; i < command_line.size(); ++i) {
    const std::string& word = command_line[i];
    const bool has_value = i + 1 < command_line.size();
    if (word == "--resume" || word.rfind("--resume=", 0) == 0) {
      i += word == "--resume" ? 1 : 0;  // and its value
    } else if (word == "--metrics" && has_value) {
      add(word);
      add(metrics_from_step(command_line[++i], step));
    } else if (word.rfind("--metrics=", 0) == 0) {
      add("--metrics=" + metrics_from_step(word.substr(10), step));
    } else {
      add(word);
    }
  }
  return command + " --resume " + shell_quoted(checkpoint);
}

/// Says on rank 0 how the run stopped and how to go on; returns the exit status.
int report_stop(const TrainArgs& a, const std::string& checkpoint, const train::TrainingReport& report) {
  const std::string signal = signal_name(report.stop_signal);
  const int status = stop_exit_code(report.stop_signal);
  const std::string stopped = "stopped by " + signal + " after step " + std::to_string(report.steps) +
                              " (exit status " + std::to_string(status) + ")";
  if (checkpoint.empty()) {
    log::info(stopped + "; no checkpoint was written (no --checkpoint given), so the run cannot be resumed");
  } else {
    log::info(stopped + "; checkpoint written to " + checkpoint);
    log::info("resume with: " + resume_command(a.command_line, checkpoint, report.steps));
    // The launcher's own command line is not ours to see.
    const int ranks = parallel::Communicator::world().size();
    if (ranks > 1) log::info("  under the MPI launcher, on " + std::to_string(ranks) + " ranks as this run was");
  }
  return status;
}

/// "done: 40 steps, 12.3 samples/s, training loss 0.9 -> 0.2, validation loss ..., peak RSS ..."
std::string summary_line(const train::TrainingReport& report) {
  std::string summary = format("%s: %lld steps, %.2f samples/s", report.stop_signal != 0 ? "stopped" : "done",
                               static_cast<long long>(report.steps), report.samples_per_second);
  if (!report.logged_losses.empty())
    summary += format(", training loss %.4f -> %.4f", report.logged_losses.front(), report.logged_losses.back());
  if (report.validation_loss >= 0) {
    summary += format(", validation loss %.4f", report.validation_loss);
    // Against the loss of predicting the training targets' mean: "N.Nx below" when better,
    // "N.Nx above" when worse (a short or diverging run), never "0.0x below".
    const double baseline = report.validation_baseline, loss = report.validation_loss;
    if (baseline > 0 && loss <= baseline)
      summary += format(" (%.1fx below predicting the mean)", baseline / std::max(loss, 1e-12));
    else if (baseline > 0)
      summary += format(" (%.1fx above predicting the mean)", loss / baseline);
  }
  return summary + format(", peak RSS %.0f MiB (largest rank)", report.peak_rss_mb_max_rank);
}

/// Rank 0 prints the batch job the run is part of and each rank's CPUs and NUMA domains (unless
/// quiet); each node's first rank warns about bindings that cost speed, rank 0 about a thread
/// count other than the CPUs the job gave each task. Collective over the job.
void report_placement(bool quiet) {
  const auto world = parallel::Communicator::world();
  if (const auto job = parallel::BatchJob::from_environment()) {
    if (!quiet) log::info(job->describe());
    const std::string warning = parallel::thread_count_warning(*job, Kokkos::DefaultHostExecutionSpace().concurrency());
    if (!warning.empty()) log::warn(warning);
  }
  const auto ranks = parallel::gather_rank_placements(world);
  if (!quiet) log::info(parallel::placement_table(ranks));
  parallel::warn_about_rank_bindings(ranks, world.rank());
}

/// Beside the run header: a CPU build without oneDNN trains several times slower.
void warn_if_portable_only() {
  if (const std::string w = registry::portable_only_warning(registry::available_backends()); !w.empty()) log::warn(w);
}

int run_population(TrainArgs& a, const nlohmann::json& config) {
  train::PopulationRun population(config, a.overrides, a.trainers);
  if (!a.quiet) {
    log::info("tessera train " + a.config);
    log::info(population.trainer_run().model().summary());
    log::info(population.describe());
  }
  warn_if_portable_only();
  report_placement(a.quiet);
  const auto report = population.run();
  log::info("trainer 0: " + summary_line(report));
  log::info(population.summary_table());
  return report.stop_signal != 0 ? report_stop(a, population.checkpoint_path(), report) : 0;
}

/// How the run computes and splits its batch: backend, precision, cuDNN's choices, balance.
void add_compute_options(CLI::App* cmd, TrainArgs& a) {
  cmd->add_option("--backend", a.overrides.backend,
                  "Default op backend for layers that do not name one: auto (fastest available, falling back "
                  "to kokkos per layer) or a compiled-in backend (see `tessera info`)")
      ->capture_default_str();
  cmd->add_option("--precision", a.overrides.precision,
                  "Override training.precision, the type activations are computed in: fp32, bf16 or fp16 "
                  "(parameters and optimizer state stay fp32; fp16 with dynamic loss scaling), or tf32 (fp32 "
                  "data, TF32 tensor-core products in cuDNN's convolutions); see docs/precision.md");
  cmd->add_option("--balance", a.overrides.balance,
                  "Override training.balance, how each global batch splits over the sample groups: even (shares "
                  "that differ by at most one sample), measured (in proportion to each rank's measured speed, set "
                  "after the first steps and again each epoch) or one weight per rank, e.g. 2,1 (docs/parallelism.md)");
  cmd->add_option("--cudnn-algorithms", a.overrides.cudnn_algorithms,
                  "Override cudnn.algorithms: heuristic (cuDNN's ranking, the same every run) or benchmark (time "
                  "the candidates on the first call; see docs/gpu.md)")
      ->check(CLI::IsMember({"heuristic", "benchmark"}));
  cmd->add_option("--cudnn-deterministic", a.overrides.cudnn_deterministic,
                  "Override cudnn.deterministic: true takes only algorithms that repeat bit for bit, false also "
                  "those that sum with atomics");
}

}  // namespace

CLI::App* add_train_command(CLI::App& app, TrainArgs& a) {
  auto* cmd = app.add_subcommand(
      "train",
      "Train a model described by a JSON run config (sections: model, loss, optimizer, data, training, local_learning, "
      "ffn; see docs/config.md).\nOn SIGTERM, SIGINT or SIGUSR1 (batch-system pre-emption) every rank finishes its "
      "step, the "
      "checkpoint is written, a resume command is printed and the exit status is 128 + the signal number; a second "
      "signal exits at once (see docs/checkpoints.md).");
  cmd->add_option("config", a.config, "Run config (JSON)")->required()->check(CLI::ExistingFile);
  // The bounds of the keys they override (TrainingLimits), so every product a run derives fits.
  using L = train::TrainingLimits;
  cmd->add_option("--epochs", a.epochs, "Override training.epochs")->check(integer_in(L::epochs));
  cmd->add_option("--batch-size", a.batch_size, "Override training.batch_size (the global mini-batch)")
      ->check(integer_in(L::batch_size));
  cmd->add_option("--accumulate", a.accumulate,
                  "Override training.accumulate: micro-batches (of --batch-size samples each) whose gradients are "
                  "summed before each optimizer step, for a larger global batch on the same memory")
      ->check(integer_in(L::accumulate));
  cmd->add_option("--max-steps", a.max_steps, "Stop after this many optimizer steps in all (0: all epochs)")
      ->check(integer_in(L::max_steps));
  cmd->add_option("--seed", a.seed, "Override training.seed (initialisation, data order, dropout), 0 to 2^62")
      ->check(integer_in(L::seed));
  add_compute_options(cmd, a);
  cmd->add_option("--distribution", a.distribution,
                  "Override model.distribution, the split of every layer without its own, as JSON, e.g. "
                  "'{\"sample\": 2, \"depth\": 2}' (counts must multiply to the number of ranks), or auto: "
                  "the planner chooses every layer's distribution on the --machine profile (docs/plan.md)");
  cmd->add_option("--machine", a.overrides.machine_file,
                  "Machine profile for \"distribution\": \"auto\" (from `tessera calibrate`; default: "
                  "$TESSERA_MACHINE); layer times the plan measures are added to it")
      ->check(CLI::ExistingFile);
  cmd->add_option("--metrics", a.overrides.metrics_file, "Write a JSON-lines metrics log to this file");
  cmd->add_option("--checkpoint", a.overrides.checkpoint_file,
                  "Checkpoint file, written atomically at the end (and every --checkpoint-every steps)");
  cmd->add_option("--checkpoint-every", a.checkpoint_every, "Steps between checkpoints (0: only at the end)")
      ->check(integer_in(L::checkpoint_every));
  cmd->add_option("--resume", a.overrides.resume_file,
                  "Resume from this checkpoint, or auto: from the newest complete one of --checkpoint (the one "
                  "before it, CHECKPOINT.previous, if the newest is damaged), starting fresh when there is none: "
                  "a batch job's script then works unchanged when it is requeued (docs/slurm.md)")
      ->check(CLI::Validator(
          [](std::string& v) { return v == "auto" ? std::string() : CLI::ExistingFile(v); }, "FILE|auto", ""));
  cmd->add_option("--trainers", a.trainers,
                  "Train a population of this many trainers that meet in tournaments (LTFB; training.ltfb in the "
                  "config, see docs/ltfb.md); it must divide the number of ranks")
      ->check(integer_in(1, 1 << 20));
  cmd->add_flag("--profile", a.overrides.profile,
                "Time every layer's forward and backward (with fences) and print the breakdown at the end");
  add_trace_options(cmd, a.trace);
  cmd->add_flag("--no-progress", a.no_progress, "No progress bar or per-step lines");
  cmd->add_flag("--quiet", a.quiet, "Only errors and the final summary");
  return cmd;
}

int run_train(TrainArgs& a) {
  // Installed first: a signal while the run is set up stops it after its first step.
  const StopSignalHandlers signals(StopMode::after_step);
  clear_stop_request();
  if (a.epochs > 0) a.overrides.epochs = a.epochs;
  if (a.batch_size > 0) a.overrides.batch_size = a.batch_size;
  if (a.accumulate > 0) a.overrides.accumulate = a.accumulate;
  if (a.max_steps >= 0) a.overrides.max_steps = a.max_steps;
  if (a.checkpoint_every >= 0) a.overrides.checkpoint_every = a.checkpoint_every;
  if (a.seed >= 0) a.overrides.seed = static_cast<uint64_t>(a.seed);
  a.overrides.progress = !(a.no_progress || a.quiet);

  if (a.overrides.machine_file.empty()) {
    if (const char* env = std::getenv("TESSERA_MACHINE"); env && *env) {
      a.overrides.machine_file = env;
      a.overrides.machine_key = "TESSERA_MACHINE";
    }
  }
  auto config = read_json_file(a.config);
  if (!a.distribution.empty()) {
    const nlohmann::json distribution =
        a.distribution == "auto" ? nlohmann::json("auto") : parse_json_text(a.distribution, "--distribution");
    if (!distribution.is_object() && distribution != "auto")
      throw ConfigError("--distribution",
                        "expected an object such as {\"depth\": 2} or auto, got " + json_excerpt(distribution));
    if (config.contains("model") && config["model"].is_object()) config["model"]["distribution"] = distribution;
  }
  // A config with an "ffn" section trains a flood-filling network: its FOVs follow its predictions.
  if (config.is_object() && config.contains("ffn")) a.overrides.extension = std::make_shared<ffn::FfnRun>();
  if (train::PopulationRun::requested(config, a.trainers)) {
    if (!a.trace.file.empty())
      throw ConfigError("--trace", "traces one trainer's run; a population of trainers is not traced (plan one "
                                   "with `tessera plan --trainers`, docs/simulation.md)");
    return run_population(a, config);
  }
  train::TrainingRun run(config, a.overrides);
  if (!a.quiet) {
    log::info("tessera train " + a.config);
    log::info(run.model().summary());
    log::info(run.describe());
#if TESSERA_ENABLE_ONEDNN
    if (run.options().precision != ElementType::fp32) log::info("onednn isa: " + onednn_isa_description());
#endif
  }
  warn_if_portable_only();
  report_placement(a.quiet);
  std::unique_ptr<RunTrace> trace;
  if (!a.trace.file.empty()) trace = std::make_unique<RunTrace>(a.trace, run, a.config);
  const auto report = run.run();
  if (trace && report.stop_signal == 0) trace->finish(a.quiet);
  if (trace && report.stop_signal != 0) log::info("trace not written: the run was stopped by a signal");
  log::info(summary_line(report));
  return report.stop_signal != 0 ? report_stop(a, run.options().checkpoint_file, report) : 0;
}

}  // namespace tessera::cli
