// `tessera bench peak|ops|model|report`: the machine's limits, every op of a model per backend,
// the training step per backend choice, and the performance portability over results from
// several machines (docs/benchmarks.md).
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <map>

#include "commands.hpp"
#include "number_checks.hpp"
#include "tessera/bench/bench_config.hpp"
#include "tessera/bench/bench_result.hpp"
#include "tessera/bench/device_peak.hpp"
#include "tessera/bench/model_benchmark.hpp"
#include "tessera/bench/model_ops.hpp"
#include "tessera/bench/op_benchmark.hpp"
#include "tessera/bench/portability_report.hpp"
#include "tessera/bench/progress_bar.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/registry/backend_registry.hpp"
#include "tessera/registry/cudnn_settings.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::cli {
namespace {

int64_t run_threads() { return Kokkos::DefaultExecutionSpace().concurrency(); }

std::string gflops_gbs(const bench::DevicePeak& d) {
  return format("%.1f", d.fma_gflops) + " GFLOP/s FMA, " + format("%.1f", d.triad_gbs) + " GB/s triad";
}

/// The peak figures the efficiencies of this run are taken against: read from --peak (which
/// must come from this machine), else measured now, briefly.
bench::PeakFigures run_peak(const BenchArgs& a, const bench::MachineDescription& machine) {
  if (!a.peak_file.empty()) {
    const bench::BenchResult peak = bench::BenchResult::read(a.peak_file);
    if (peak.kind != "peak")
      throw ConfigError("--peak " + a.peak_file + ": $.kind", "expected a `tessera bench peak` result");
    if (peak.machine.key() != machine.key())
      throw ConfigError("--peak " + a.peak_file + ": $.machine",
                        "measured on " + peak.machine.key() + ", not on this machine (" + machine.key() + ")");
    if (peak.peak.threads != bench::host_threads() && bench::host_threads() > 1)
      throw ConfigError("--peak " + a.peak_file + ": $.peak.threads",
                        "all-core figures for " + std::to_string(peak.peak.threads) + " threads; this run has " +
                            std::to_string(bench::host_threads()));
    if (bench::device_build() && !peak.peak.device)
      throw ConfigError("--peak " + a.peak_file + ": $.peak.device",
                        "no device figures; this build runs its ops on " + bench::device_name());
    return peak.peak;
  }
  bench::PeakOptions o;
  o.threads = bench::host_threads();
  o.seconds = 0.05;
  o.repeats = 3;
  o.triad_bytes = a.triad_mb << 20;
  return bench::measure_peak(o);
}

/// The result's platform label for `backend`: as --platform names it, else "<backend>@<threads>t".
std::string platform_of(const BenchArgs& a, const std::string& backend) {
  for (const auto& p : a.platforms) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size())
      throw ConfigError("--platform " + p, "expected BACKEND=LABEL");
    if (p.substr(0, eq) == backend) return p.substr(eq + 1);
  }
  // A device build's ops run on the device, whatever the host threads.
  if (bench::device_build()) return backend + "@" + Kokkos::DefaultExecutionSpace::name();
  return backend + "@" + std::to_string(run_threads()) + "t";
}

std::vector<std::string> chosen_backends(const BenchArgs& a, bool allow_auto) {
  if (a.backends.empty()) return registry::available_backends();
  for (const auto& b : a.backends) {
    if (allow_auto && b == "auto") continue;
    try {
      registry::backend(b);
    } catch (const Error& e) {
      throw ConfigError("--backend", e.what());
    }
  }
  return a.backends;
}

void write_result(const BenchArgs& a, const bench::BenchResult& r) {
  if (a.output.empty() || log::rank() != 0) return;
  r.write(a.output);
  log::info("result written to " + a.output);
}

int run_peak_command(const BenchArgs& a) {
  bench::BenchResult r;
  r.kind = "peak";
  r.machine = bench::MachineDescription::probe();
  bench::PeakOptions o;
  o.threads = bench::host_threads();
  o.seconds = a.seconds;
  o.triad_bytes = a.triad_mb << 20;
  // Many short tries, the best kept: on a shared machine some of them find the cores idle.
  o.repeats = 10;
  bench::ProgressBar progress(!a.no_progress, bench::peak_measurements());
  r.peak = bench::measure_peak(o, [&](const std::string& what) { progress.advance(what); });
  progress.finish();
  const auto& p = r.peak;
  log::info("machine: " + r.machine.key() + ", " + std::to_string(r.machine.cores) + " CPUs, " +
            std::to_string(r.machine.numa_domains) + " NUMA domain(s), " + r.machine.compiler);
  log::info("FMA (" + p.fma_kernel + ", fp32): " + format("%.1f", p.fma_gflops_one_core) + " GFLOP/s one core, " +
            format("%.1f", p.fma_gflops_all_cores) + " GFLOP/s on " + std::to_string(p.threads) + " threads");
  if (p.bf16_gflops_one_core && p.bf16_gflops_all_cores)
    log::info("bf16 dot products (avx512_bf16, fp32 accumulation): " + format("%.1f", *p.bf16_gflops_one_core) +
              " GFLOP/s one core, " + format("%.1f", *p.bf16_gflops_all_cores) + " GFLOP/s on " +
              std::to_string(p.threads) + " threads");
  log::info("STREAM triad (" + std::to_string(p.triad_bytes >> 20) + " MiB): " + format("%.1f", p.triad_gbs_one_core) +
            " GB/s one core, " + format("%.1f", p.triad_gbs_all_cores) + " GB/s on " + std::to_string(p.threads) +
            " threads");
  if (p.device)
    log::info("device " + p.device->name + ": " + gflops_gbs(*p.device) + " (" +
              std::to_string(p.device->triad_bytes >> 20) + " MiB triad); the ops of this build run there");
  else
    log::info(std::string("device: none, this build runs its ops on the host (Kokkos ") +
              Kokkos::DefaultExecutionSpace::name() + "); no device peak measured");
  // FMA throughput scales with cores unless they are SMT siblings or busy; a peak measured on
  // busy cores understates the limit, and every efficiency taken against it is overstated.
  if (p.threads > 1 && p.fma_gflops_all_cores < 0.75 * static_cast<double>(p.threads) * p.fma_gflops_one_core)
    log::warn("all-thread FMA is only " + format("%.2f", p.fma_gflops_all_cores / p.fma_gflops_one_core) +
              "x one thread on " + std::to_string(p.threads) +
              " threads: the threads share cores (SMT) or other work is running; efficiencies against this "
              "peak are overstated if it is the latter (measure again on an idle machine)");
  write_result(a, r);
  return 0;
}

/// The config as the benchmark runs it: --size and --batch-size applied, and --precision as
/// its training.precision (ops are timed, and the model trained, in that type).
nlohmann::json scaled_config(const BenchArgs& a) {
  nlohmann::json c = bench::benchmark_config(a.config, a.size, a.batch_size);
  if (!a.precision.empty()) c["training"]["precision"] = a.precision;
  return c;
}

bench::BenchResult start_model_result(const BenchArgs& a, const std::string& kind, nlohmann::json& config) {
  config = scaled_config(a);
  bench::BenchResult r;
  r.kind = kind;
  r.model = bench::model_name(config, a.config);
  r.config = a.config;
  r.batch = bench::config_batch(config);
  r.size = a.size;
  r.machine = bench::MachineDescription::probe();
  r.peak = run_peak(a, r.machine);
  return r;
}

/// The config's "cudnn" section and "precision": "tf32", with the flags' overrides, handed to
/// the cuDNN backend before any op is made (the ops time what a run of the config would run).
void apply_cudnn_settings(const nlohmann::json& config, const BenchArgs& a) {
  registry::CudnnSettings overrides;
  if (config.contains("training") && config["training"].value("precision", "") == "tf32") overrides.tf32 = true;
  overrides.algorithms = a.cudnn_algorithms;
  overrides.deterministic = a.cudnn_deterministic;
  const std::string note = registry::apply_run_cudnn_settings(config, overrides);
  if (!note.empty()) log::info("note: " + note);
}

int run_ops_command(const BenchArgs& a) {
  // Flags and config first: a mistake is reported before anything is measured.
  const auto backends = chosen_backends(a, false);
  const nlohmann::json scaled = scaled_config(a);
  apply_cudnn_settings(scaled, a);
  const auto cases =
      bench::model_op_cases(scaled.at("model"), bench::config_batch(scaled), bench::config_precision(scaled));
  nlohmann::json config;
  bench::BenchResult r = start_model_result(a, "ops", config);
  bench::TimingOptions timing;
  timing.warmup = static_cast<int>(a.warmup);
  timing.reps = static_cast<int>(a.reps);
  bench::ProgressBar progress(!a.no_progress, static_cast<int64_t>(cases.size() * backends.size()));
  for (const auto& b : backends)
    for (const auto& c : cases) {
      progress.advance(b + " " + c.layer);
      for (const auto& t : bench::time_op_case(c, registry::backend(b), timing)) {
        bench::OpResult o;
        o.timing = t;
        o.platform = platform_of(a, b);
        r.ops.push_back(o);
      }
    }
  progress.finish();
  bench::derive_op_efficiencies(r);
  log::info(r.model + " at batch " + std::to_string(r.batch) + ", " + std::to_string(run_threads()) +
            " thread(s); limits " + format("%.1f", r.peak.gflops(run_threads())) + " GFLOP/s, " +
            format("%.1f", r.peak.gbs(run_threads())) + " GB/s (median of " + std::to_string(a.reps) + " after " +
            std::to_string(a.warmup) + " warm-up)");
  log::info("platform       layer        op class                           ms     GFLOP/s     GB/s   arch    app");
  for (const auto& o : r.ops) {
    const auto& t = o.timing;
    if (!t.supported)
      log::info(format("%-14s %-12s %-30s  not supported: %s", o.platform.c_str(), t.layer.c_str(), t.op_class.c_str(),
                       t.why.c_str()));
    else
      log::info(format("%-14s %-12s %-30s %9.3f %9.1f %9.1f  %5.3f  %5.3f%s", o.platform.c_str(), t.layer.c_str(),
                       t.op_class.c_str(), t.seconds * 1e3, t.flops / t.seconds / 1e9, t.bytes / t.seconds / 1e9,
                       o.arch_efficiency, o.app_efficiency, o.memory_bound ? "  mem" : ""));
  }
  write_result(a, r);
  return 0;
}

/// The op timings of the --ops results, each checked to be `tessera bench ops` of this model,
/// batch, size, machine and threads.
std::vector<bench::OpResult> ops_of(const BenchArgs& a, const std::string& name, const bench::BenchResult& r) {
  std::vector<bench::OpResult> all;
  for (const std::string& file : a.ops_files) {
    const bench::BenchResult ops = bench::BenchResult::read(file);
    const std::string where = "--ops " + file + ": $";
    if (ops.kind != "ops") throw ConfigError(where + ".kind", "expected a `tessera bench ops` result");
    if (ops.model != name) throw ConfigError(where + ".model", "model '" + ops.model + "', not '" + name + "'");
    if (ops.batch != r.batch || ops.size != r.size)
      throw ConfigError(where + ".batch", "measured at batch " + std::to_string(ops.batch) + " size " +
                                              std::to_string(ops.size) + "; this run has batch " +
                                              std::to_string(r.batch) + " size " + std::to_string(r.size));
    if (ops.machine.key() != r.machine.key())
      throw ConfigError(where + ".machine", "measured on " + ops.machine.key() + ", not here");
    if (ops.machine.threads != r.machine.threads)
      throw ConfigError(where + ".machine.threads", "measured on " + std::to_string(ops.machine.threads) +
                                                        " thread(s); this run has " +
                                                        std::to_string(r.machine.threads));
    all.insert(all.end(), ops.ops.begin(), ops.ops.end());
  }
  return all;
}

int run_model_command(const BenchArgs& a) {
  // The ops results first: a wrong one is refused before anything is measured.
  const nlohmann::json scaled = scaled_config(a);
  const std::string name = bench::model_name(scaled, a.config);
  apply_cudnn_settings(scaled, a);
  const auto backends = chosen_backends(a, true);
  nlohmann::json config;
  bench::BenchResult r = start_model_result(a, "model", config);
  const std::vector<bench::OpResult> ops = ops_of(a, name, r);
  for (const auto& b : backends) {
    bench::ModelBenchOptions o;
    o.backend = b;
    o.platform = platform_of(a, b);
    o.warmup_steps = a.warmup;
    o.steps = a.steps;
    o.progress = !a.no_progress;
    r.models.push_back(bench::benchmark_model(config, o, ops, r.peak, run_threads()));
  }
  bench::derive_model_efficiencies(r);
  log::info(r.model + " at batch " + std::to_string(r.batch) + ", " + std::to_string(run_threads()) +
            " thread(s), median of " + std::to_string(a.steps) + " steps after " + std::to_string(a.warmup));
  log::info("platform        step ms  samples/s  compute ms  memory ms  comm ms  other ms  roofline ms   arch    app");
  for (const auto& m : r.models) {
    if (!m.supported)
      log::info(format("%-14s cannot run: %s", m.platform.c_str(), m.why.c_str()));
    else
      log::info(format("%-14s %8.1f %10.2f %11.1f %10.1f %8.1f %9.1f %12.1f  %5.3f  %5.3f", m.platform.c_str(),
                       m.step_seconds * 1e3, m.samples_per_second, m.compute_bound_seconds * 1e3,
                       m.memory_bound_seconds * 1e3, m.communication_seconds * 1e3, m.other_seconds * 1e3,
                       m.roofline_seconds * 1e3, m.arch_efficiency, m.app_efficiency));
  }
  write_result(a, r);
  return 0;
}

int run_report_command(const BenchArgs& a) {
  std::vector<std::pair<std::string, bench::BenchResult>> results;
  for (const auto& f : a.results) results.emplace_back(f, bench::BenchResult::read(f));
  const auto report = bench::PortabilityReport::build(results);
  if (log::rank() != 0) return 0;
  std::printf("%s", report.table(0.3).c_str());
  if (!a.cascade.empty()) {
    write_text_atomically(a.cascade, report.cascade_svg());
    std::printf("cascade plot written to %s\n", a.cascade.c_str());
  }
  if (!a.roofline.empty()) {
    write_text_atomically(a.roofline, report.roofline_svg());
    std::printf("roofline plot written to %s\n", a.roofline.c_str());
  }
  std::string app, arch;
  for (const auto& row : report.models()) {
    const std::string name = row.application.substr(6);  // after "model "
    app += (app.empty() ? "" : ",") + name + ":" + format("%.3f", row.pp_app);
    arch += (arch.empty() ? "" : ",") + name + ":" + format("%.3f", row.pp_arch);
  }
  std::printf("pp_app=%s pp_arch=%s best_conv_arch_eff=%.3f\n", app.empty() ? "none" : app.c_str(),
              arch.empty() ? "none" : arch.c_str(), report.best_conv_arch());
  std::fflush(stdout);
  return 0;
}

void add_model_flags(CLI::App* cmd, BenchArgs& a) {
  cmd->add_option("config", a.config, "Run config (JSON) whose model is measured")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--precision", a.precision,
                  "Replace training.precision: time the ops (and train the model) in fp32, bf16, fp16 or tf32; "
                  "results keep precisions apart (docs/benchmarks.md)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16", "tf32"}));
  cmd->add_option("--size", a.size, "Replace the sample size (model input and data, cubic)")
      ->check(integer_in(1, int64_t{1} << 20));
  cmd->add_option("--batch-size", a.batch_size, "Replace the global batch")
      ->check(integer_in(train::TrainingLimits::batch_size));
  cmd->add_option("--backend", a.backends, "Backend to measure (repeatable; default: every compiled backend)");
  cmd->add_option("--platform", a.platforms,
                  "BACKEND=LABEL: the platform name results carry for BACKEND (default BACKEND@<threads>t)");
  cmd->add_option("--peak", a.peak_file, "A `tessera bench peak` result of this machine (default: measure briefly)");
  cmd->add_option("--triad-mb", a.triad_mb, "Triad arrays in MiB when measuring the peak")
      ->check(integer_in(1, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--output,-o", a.output, "Write the result (JSON) here");
  cmd->add_flag("--no-progress", a.no_progress, "No progress bar");
  cmd->add_option("--cudnn-algorithms", a.cudnn_algorithms,
                  "Override cudnn.algorithms: heuristic or benchmark (as for train)")
      ->check(CLI::IsMember({"heuristic", "benchmark"}));
  cmd->add_option("--cudnn-deterministic", a.cudnn_deterministic,
                  "Override cudnn.deterministic: true or false (as for train)");
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, BenchArgs& a) {
  auto* bench =
      app.add_subcommand("bench",
                         "Portability benchmarks: the machine's limits, ops and training steps per backend, and the "
                         "performance-portability metric over results (docs/benchmarks.md).");
  bench->require_subcommand(1);
  auto* peak =
      bench->add_subcommand("peak", "Measure FMA throughput and STREAM-triad bandwidth, one core and all threads");
  peak->add_option("--output,-o", a.output, "Write the result (JSON) here");
  peak->add_option("--seconds", a.seconds, "Seconds per FMA timing")
      ->check(real_in(0.001, 60.0))
      ->capture_default_str();
  peak->add_option("--triad-mb", a.triad_mb, "Triad arrays in MiB (beyond the last-level cache)")
      ->check(integer_in(1, int64_t{1} << 20))
      ->capture_default_str();
  peak->add_flag("--no-progress", a.no_progress, "No progress bar");
  peak->callback([&a] { a.command = "peak"; });

  auto* ops = bench->add_subcommand("ops", "Time every op of a model at its real shapes on each backend");
  add_model_flags(ops, a);
  ops->add_option("--reps", a.reps, "Timed repetitions per op (the median is kept)")
      ->check(integer_in(1, 10000))
      ->capture_default_str();
  ops->add_option("--warmup", a.warmup, "Untimed calls before timing")
      ->check(integer_in(0, 1000))
      ->capture_default_str();
  ops->callback([&a] { a.command = "ops"; });

  auto* model = bench->add_subcommand("model", "Time training steps per backend choice, split by the ops' bounds");
  add_model_flags(model, a);
  model
      ->add_option("--ops", a.ops_files,
                   "The `tessera bench ops` result of the same config on this machine (repeatable: results of "
                   "several backends, e.g. the ops a backend lacks in bf16 timed on Kokkos)")
      ->required();
  model->add_option("--steps", a.steps, "Timed steps (the median is kept)")
      ->check(integer_in(1, 100000))
      ->capture_default_str();
  model->add_option("--warmup", a.warmup, "Untimed steps first")->check(integer_in(0, 1000))->capture_default_str();
  model->callback([&a] { a.command = "model"; });

  auto* report = bench->add_subcommand("report", "Merge results and compute the performance portability");
  report->add_option("results", a.results, "Result files of tessera bench ops/model/peak")
      ->required()
      ->check(CLI::ExistingFile);
  report->add_option("--cascade", a.cascade, "Write the efficiency cascade plot (SVG) here");
  report->add_option("--roofline", a.roofline, "Write the roofline plot (SVG) here");
  report->callback([&a] { a.command = "report"; });
  return bench;
}

int run_bench(BenchArgs& a) {
  // Outputs first: a path that cannot be written is refused before anything is measured.
  if (!a.output.empty()) require_writable_location(a.output, "--output (the result)");
  if (!a.cascade.empty()) require_writable_location(a.cascade, "--cascade (the plot)");
  if (!a.roofline.empty()) require_writable_location(a.roofline, "--roofline (the plot)");
  if (a.command == "peak") return run_peak_command(a);
  if (a.command == "ops") return run_ops_command(a);
  if (a.command == "model") return run_model_command(a);
  if (a.command == "report") return run_report_command(a);
  throw Error("tessera bench: no command");
}

}  // namespace tessera::cli
