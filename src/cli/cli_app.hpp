#pragma once
// The `tessera` command line as a library: every command, its flags and their checks, parsed
// without running anything (for main, the tests that feed every flag bad values, and the
// command-line fuzzer), and the dispatch to the command given.
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"

namespace tessera::cli {

/// Every command's flags, and the subcommand each is parsed from.
struct Commands {
  TrainArgs train_args;
  DatagenArgs datagen_args;
  FashionMnistArgs fashion_args;
  InfoArgs info_args;
  SearchArgs search_args;
  PlanArgs plan_args;
  BenchArgs bench_args;
  CalibrateArgs calibrate_args;
  ReportArgs report_args;
  ScoreArgs score_args;
  PredictArgs predict_args;
  FfnSegmentArgs ffn_args;
  CLI::App *train = nullptr, *datagen = nullptr, *fashion_mnist = nullptr, *info = nullptr, *search = nullptr,
           *plan = nullptr, *bench = nullptr, *calibrate = nullptr, *report = nullptr, *score = nullptr,
           *predict = nullptr, *ffn = nullptr;
};

/// The `tessera` application with every command added; `command_line` (the whole argv) is kept
/// for the resume hint of a stopped run.
std::unique_ptr<CLI::App> make_app(Commands& c, const std::vector<std::string>& command_line);

/// The error for the first word where `app` (or one of its subcommands) expects a subcommand
/// and has none of that name, or "". CLI11 would only say that a subcommand is required.
std::string unknown_subcommand(CLI::App& app, const std::vector<char*>& args);

/// The error for a malformed numeric Kokkos flag (`--kokkos-threads=abc`), or "".
std::string bad_kokkos_flag(const std::vector<char*>& args);

/// Parses our arguments and checks the Kokkos ones; the exit status when the program ends
/// here (help, version, a bad argument: rank 0 prints why), nothing when a command is to run.
std::optional<int> parse(CLI::App& app, std::vector<char*>& ours, const std::vector<char*>& kokkos_args);

/// Runs the command parsed into `c`; its exit status. Errors of any kind end every rank here.
int run_command(Commands& c);

}  // namespace tessera::cli
