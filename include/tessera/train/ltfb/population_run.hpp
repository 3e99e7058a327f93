#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/io/dataset.hpp"
#include "tessera/train/ltfb/ltfb_options.hpp"
#include "tessera/train/ltfb/population_layout.hpp"
#include "tessera/train/ltfb/tournament_hook.hpp"
#include "tessera/train/training_run.hpp"

namespace tessera::train {

/// A job of several trainers that meet in tournaments (LtfbOptions, TournamentHook). It
/// splits the job's ranks (PopulationLayout) and builds this rank's trainer from the run
/// config as TrainingRun would build the only one, except that trainer t
///   - trains on its own ranks, under the model's own distribution;
///   - has seed `training.seed` + t (initial weights, data order, dropout), while the data
///     set keeps the run's seed (`data.seed` defaults to it), so every trainer sees the same
///     samples and is validated on the same set;
///   - draws its hyper-parameters from the declared ranges (from (seed, t) alone);
///   - holds out its own block of tournament samples from the end of the training set;
///   - writes its metrics log to the given file (trainer 0, which also logs the tournaments)
///     or beside it, `<stem>.trainer<t><ext>`;
///   - checkpoints with the population (PopulationCheckpointHook), and resumes from a
///     population manifest.
/// Only the job's first rank prints.
class PopulationRun {
 public:
  /// Whether `config` asks for a population ("training.ltfb") or a --trainers flag does.
  static bool requested(const nlohmann::json& config, int64_t trainers_flag);

  /// `overrides.group` is the job; `trainers_flag` > 0 overrides "training.ltfb.trainers".
  PopulationRun(nlohmann::json config, const RunOverrides& overrides, int64_t trainers_flag);
  TrainingReport run();

  TrainingRun& trainer_run() { return *run_; }
  const PopulationLayout& layout() const { return *layout_; }
  const LtfbOptions& options() const { return options_; }
  const PopulationSummary& summary() const { return tournaments_->summary(); }
  /// The population's checkpoint (manifest) path, empty: none.
  const std::string& checkpoint_path() const { return checkpoint_path_; }
  /// A few lines for the console: the population, then this trainer's run.
  std::string describe() const;
  /// The population's final table: each trainer's validation loss and hyper-parameters.
  std::string summary_table() const;

 private:
  void draw_hyperparameters(uint64_t seed);
  void restore_hyperparameters(const std::vector<std::string>& keys, const std::vector<double>& values);

  LtfbOptions options_;
  std::unique_ptr<PopulationLayout> layout_;
  std::unique_ptr<TrainingRun> run_;
  std::unique_ptr<io::Dataset> tournament_data_;
  TournamentHook* tournaments_ = nullptr;  // owned by the trainer
  std::string checkpoint_path_;
  uint64_t seed_ = 0;
};

}  // namespace tessera::train
