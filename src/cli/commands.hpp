#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "tessera/train/training_run.hpp"

namespace tessera::cli {

/// The flags of `tessera train`.
struct TrainArgs {
  std::string config;
  train::RunOverrides overrides;
  int64_t epochs = 0, batch_size = 0, max_steps = -1, checkpoint_every = -1, seed = -1;
  bool no_progress = false, quiet = false;
};

CLI::App* add_train_command(CLI::App& app, TrainArgs& args);
int run_train(TrainArgs& args);
int run_info();

}  // namespace tessera::cli
