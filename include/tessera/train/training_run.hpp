#pragma once
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/plan/layout_planner.hpp"
#include "tessera/train/run_extension.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::train {

/// Command-line settings that override or complete a run config.
struct RunOverrides {
  std::optional<int64_t> epochs, batch_size, accumulate, max_steps, checkpoint_every;
  std::optional<uint64_t> seed;
  std::string backend = "auto";
  std::optional<std::string> precision;  // --precision: overrides training.precision
  std::optional<std::string> balance;    // --balance: overrides training.balance
  /// --cudnn-algorithms, --cudnn-deterministic: override the config's "cudnn" section.
  std::optional<std::string> cudnn_algorithms;
  std::optional<bool> cudnn_deterministic;
  std::string metrics_file, checkpoint_file, resume_file;
  bool progress = true;
  bool profile = false;
  /// The ranks that train together (all ranks of the job by default).
  parallel::Communicator group = parallel::Communicator::world();
  /// The last this many training samples are not trained on but held out
  /// (TrainingRun::held_out(): a population's tournament data); `held_out_key` names where
  /// the count comes from, for errors.
  int64_t held_out_samples = 0;
  std::string held_out_key = "held-out samples";
  /// The machine profile a model with "distribution": "auto" is planned on (--machine, or
  /// TESSERA_MACHINE); `machine_key` names where it came from, for errors.
  std::string machine_file, machine_key = "--machine";
  /// What a kind of run adds (its config section, datasets and training source); null: a
  /// standard run.
  std::shared_ptr<RunExtension> extension;
  /// Errors name an override by its flag ("--batch-size"), or with `keyword_names` (the Python
  /// module) by its keyword argument ("batch_size").
  bool keyword_names = false;
  std::string flag_name(const std::string& flag) const;
};

/// A training run assembled from a run config:
///   {"model": {...}, "loss": {...}, "optimizer": {..., "schedule": {...}},
///    "data": {...}, "training": {...}, "cudnn": {...}}
/// Every section is validated strictly; errors name the JSON path.
class TrainingRun {
 public:
  TrainingRun(const nlohmann::json& config, const RunOverrides& overrides);
  TrainingReport run() { return trainer_->run(); }

  model::Model& model() { return *model_; }
  Trainer& trainer() { return *trainer_; }
  const TrainingOptions& options() const { return options_; }
  /// The "training" section with the command line's overrides applied and checked, as a run
  /// reads it (a population reads it too, before it builds its trainers).
  static TrainingOptions training_options(ConfigObject& training, const RunOverrides& overrides);
  /// Values the config's optimizer keeps per trainable element (0 for plain SGD, 2 for Adam).
  static double optimizer_state_per_parameter(const nlohmann::json& config);
  /// A few lines describing model, data, optimizer and threads, for the console.
  std::string describe() const;
  /// The plan of a model whose distribution is "auto" (null otherwise).
  const plan::Plan* layout_plan() const { return plan_ ? &*plan_ : nullptr; }
  /// The samples held out of the training set (RunOverrides::held_out_samples), else null.
  const std::shared_ptr<io::Dataset>& held_out() const { return held_out_; }

 private:
  void hold_out(int64_t samples, const std::string& key);
  /// The config's model (planned first when its distribution is "auto"), checked to fit.
  void build_model(ConfigObject& root, const RunOverrides& overrides);
  /// The config's "cudnn" section, TF32 and the command line's overrides, handed to the cuDNN
  /// backend (a note where the build has none).
  void apply_cudnn_settings(ConfigObject& root, const RunOverrides& overrides) const;

  nlohmann::json config_, optimizer_config_;
  TrainingOptions options_;
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<layers::Loss> loss_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  io::DataSplit data_;
  std::shared_ptr<io::Dataset> held_out_;
  std::unique_ptr<Trainer> trainer_;
  std::optional<plan::Plan> plan_;
};

}  // namespace tessera::train
