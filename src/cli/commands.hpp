#pragma once
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "run_trace.hpp"
#include "tessera/ffn/flood_filler.hpp"
#include "tessera/train/training_run.hpp"

namespace tessera::cli {

/// The flags of `tessera train`.
struct TrainArgs {
  std::string config;
  train::RunOverrides overrides;
  int64_t epochs = 0, batch_size = 0, accumulate = 0, max_steps = -1, checkpoint_every = -1, seed = -1;
  int64_t trainers = 0;      // --trainers: a population (0: as the config says)
  std::string distribution;  // JSON overriding model.distribution
  bool no_progress = false, quiet = false;
  std::vector<std::string> command_line;  // the whole command, for the resume hint of a stopped run
  TraceArgs trace;                        // --trace, --trace-steps, --trace-skip
};

/// The flags of `tessera datagen cosmoflow|cells`.
struct DatagenArgs {
  std::string generator = "cosmoflow";  // the subcommand given
  std::string output;
  int64_t samples = 1024, validation_samples = 128, size = 64, channels = 4, seed = 0, samples_per_file = 64;
  std::string layout = "sample-per-file", dtype = "int16";
  double mean_count = 64.0;
  double cell_size = 14.0, membrane = 1.6, noise = 0.08;  // cells only
  bool checksum = false, no_progress = false, quiet = false;
};

/// The flags of `tessera datagen fashion-mnist`.
struct FashionMnistArgs {
  std::string from = "/usr/share/datasets/fashion-mnist", output;
  int64_t train_samples = 0, test_samples = 0;  // 0: all
  bool checksum = false;
};

/// The flags of `tessera info`.
struct InfoArgs {
  bool topology = false;
  std::string topology_of;  // an hwloc XML file or synthetic description ("": this node)
};

/// The flags of `tessera search`.
struct SearchArgs {
  std::string space, output, backend = "auto";
  int64_t trainers = 0;
  bool resume = false, quiet = false;
};

/// The flags of `tessera plan`.
struct PlanArgs {
  std::string config, machine, memory_limit, backend = "auto", json, write_config, precision;
  std::string schedule, simulate;  // --schedule FILE, --simulate PLATFORM
  int ranks = 1;
  int64_t trainers = 0;  // --trainers: schedule a population's round (0: training.ltfb's, or 1)
  int64_t batch_size = 0;
  double min_gain = 0.02;
  bool given = false, no_measure = false;
};

/// The flags of `tessera bench peak|ops|model|report`.
struct BenchArgs {
  std::string command;  // the subcommand given
  std::string precision;  // --precision: replaces training.precision (ops, model)
  std::string config, output, peak_file, cascade, roofline;
  std::vector<std::string> ops_files;  // bench model --ops (repeatable)
  std::vector<std::string> backends, platforms, results;
  int64_t size = 0, batch_size = 0, reps = 5, warmup = 1, steps = 5, triad_mb = 384;
  std::optional<std::string> cudnn_algorithms;  // overrides of the config's "cudnn" section
  std::optional<bool> cudnn_deterministic;
  double seconds = 0.1;
  bool no_progress = false;
};

/// The flags of `tessera report`.
struct ReportArgs {
  std::vector<std::string> logs;
  std::string output, title = "Tessera run report";
};

/// The flags of `tessera score`.
struct ScoreArgs {
  std::string truth, truth_dataset = "instances";
  std::string segmentation, segmentation_dataset = "segmentation";
  std::string components, components_dataset = "predictions";
  double threshold = 0.5;
  double noisy_truth = -1;  // < 0: not asked for
  int64_t sample = 0, min_voxels = 1;
  std::optional<int64_t> channel;  // of a [D, H, W, K] map; none: the last
  int64_t seed = 0;
  bool json = false;
};

/// The flags of `tessera predict`.
struct PredictArgs {
  std::string config, checkpoint, input, output, backend = "auto";
  int64_t sample = 0;
};

/// The flags of `tessera ffn segment`.
struct FfnSegmentArgs {
  std::string config, checkpoint, volume, output, truth_dataset = "instances", backend = "auto";
  int64_t sample = 0;
  ffn::FloodFillOptions fill;
  bool untrained = false, no_score = false, json = false;
};

/// The flags of `tessera calibrate`.
struct CalibrateArgs {
  std::string output, name;
  int64_t ranks_max = 0;  // 0: every rank of the job
  int64_t threads = 0;    // 0: Kokkos' host threads
  bool quick = false;
};

CLI::App* add_train_command(CLI::App& app, TrainArgs& args);
int run_train(TrainArgs& args);
/// Adds `datagen` (with its `cosmoflow` and `cells` subcommands); returns `datagen`.
CLI::App* add_datagen_command(CLI::App& app, DatagenArgs& args);
int run_datagen(DatagenArgs& args);
/// Adds `fashion-mnist` (the importer) to `datagen`; returns it.
CLI::App* add_fashion_mnist_command(CLI::App& datagen, FashionMnistArgs& args);
int run_fashion_mnist(FashionMnistArgs& args);
int run_info(const InfoArgs& args);
/// "avx512_core_bf16 (bf16 instructions: yes)": the ISA oneDNN dispatches here, or why none.
std::string onednn_isa_description();
CLI::App* add_search_command(CLI::App& app, SearchArgs& args);
int run_search(SearchArgs& args);
CLI::App* add_plan_command(CLI::App& app, PlanArgs& args);
int run_plan(PlanArgs& args);
/// Adds `bench` with its subcommands; returns `bench`.
CLI::App* add_bench_command(CLI::App& app, BenchArgs& args);
int run_bench(BenchArgs& args);
CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& args);
int run_calibrate(CalibrateArgs& args);
CLI::App* add_report_command(CLI::App& app, ReportArgs& args);
int run_report(const ReportArgs& args);
CLI::App* add_score_command(CLI::App& app, ScoreArgs& args);
int run_score(const ScoreArgs& args);
CLI::App* add_predict_command(CLI::App& app, PredictArgs& args);
int run_predict(const PredictArgs& args);
/// Adds `ffn` with its `segment` subcommand; returns `ffn`.
CLI::App* add_ffn_command(CLI::App& app, FfnSegmentArgs& args);
int run_ffn_segment(const FfnSegmentArgs& args);

}  // namespace tessera::cli
