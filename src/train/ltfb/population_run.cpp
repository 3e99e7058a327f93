#include "tessera/train/ltfb/population_run.hpp"

#include <cmath>
#include <fstream>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/io/dataset_slice.hpp"
#include "tessera/train/ltfb/population_checkpoint.hpp"
#include "tessera/train/ltfb/population_checkpoint_hook.hpp"
#include "tessera/train/metrics_log.hpp"

namespace tessera::train {
namespace {

/// What the run of this rank's trainer overrides: its group and seed, no checkpoint of its
/// own (the population's is written instead), the tournament samples held out of its data,
/// progress on the job's rank 0 only, and a metrics log of its own beside the first trainer's.
RunOverrides trainer_overrides(const RunOverrides& overrides, const PopulationLayout& layout,
                               const LtfbOptions& options, uint64_t seed) {
  const int64_t t = layout.trainer();
  RunOverrides mine = overrides;
  mine.group = layout.trainer_group();
  mine.seed = seed + static_cast<uint64_t>(t);
  mine.checkpoint_file.clear();
  mine.checkpoint_every.reset();
  mine.resume_file.clear();  // set from the population's manifest when it resumes
  mine.held_out_samples = options.trainers * options.tournament_samples;
  mine.held_out_key = "$.training.ltfb.tournament_samples";
  mine.progress = overrides.progress && layout.job().rank() == 0;
  if (!overrides.metrics_file.empty() && t > 0)
    mine.metrics_file = log_beside(overrides.metrics_file, ".trainer" + std::to_string(t));
  return mine;
}

/// The manifest --resume names, which must be a population checkpoint of `trainers` trainers.
PopulationManifest resumed_population(const std::string& resume_file, int64_t trainers) {
  if (!PopulationManifest::is_manifest(resume_file))
    throw ConfigError("--resume", resume_file +
                                      " is not a population checkpoint: a population resumes from the manifest "
                                      "written at its --checkpoint path");
  PopulationManifest manifest = PopulationManifest::read(resume_file);
  if (manifest.trainers != trainers)
    throw ConfigError("--resume", resume_file + " holds a population of " + std::to_string(manifest.trainers) +
                                      " trainers, this run has " + std::to_string(trainers));
  return manifest;
}

/// The manifest a population resumes from: --resume's file, or with --resume auto the
/// population's own checkpoint manifest when one was written (a requeued job), else none. Its
/// manifest is written atomically after every trainer's file, so an existing one is complete;
/// unlike a single run's, the population keeps no previous checkpoint to fall back to.
std::string population_resume_file(const std::string& resume, const std::string& checkpoint) {
  if (resume != "auto") return resume;
  if (checkpoint.empty())
    throw ConfigError("--resume", "auto resumes from the population's own checkpoint: add --checkpoint FILE (or "
                                  "training.checkpoint.path)");
  if (std::ifstream(checkpoint).good()) {
    log::info("--resume auto: resuming the population from " + checkpoint);
    return checkpoint;
  }
  log::info("--resume auto: no population checkpoint at " + checkpoint + " yet: starting from step 0");
  return "";
}

}  // namespace

bool PopulationRun::requested(const nlohmann::json& config, int64_t trainers_flag) {
  if (trainers_flag > 0) return true;
  const auto training = config.find("training");
  return training != config.end() && training->is_object() && training->contains("ltfb");
}

PopulationRun::PopulationRun(nlohmann::json config, const RunOverrides& overrides, int64_t trainers_flag) {
  if (!config.is_object()) throw ConfigError("$", "a run config is a JSON object");
  nlohmann::json& training = config["training"];
  if (training.is_null()) training = nlohmann::json::object();
  if (!training.is_object()) throw ConfigError("$.training", "expected an object");
  const nlohmann::json ltfb = training.contains("ltfb") ? training["ltfb"] : nlohmann::json::object();
  training.erase("ltfb");
  ConfigObject training_cfg(training, "$.training");
  // The population resumes from its manifest (below), not from one trainer's checkpoint.
  RunOverrides shared = overrides;
  shared.resume_file.clear();
  const TrainingOptions opts = TrainingRun::training_options(training_cfg, shared);
  if (!ltfb.is_object()) throw ConfigError("$.training.ltfb", "expected an object");
  ConfigObject ltfb_cfg(ltfb, "$.training.ltfb");
  options_ = LtfbOptions::from_json(ltfb_cfg, opts.batch_size, trainers_flag);
  layout_ = std::make_unique<PopulationLayout>(overrides.group, options_.trainers,
                                               trainers_flag > 0 ? "--trainers" : "$.training.ltfb.trainers");
  seed_ = opts.seed;
  const int64_t t = layout_->trainer();

  // Every trainer reads the same data: the data seed stays the run's.
  if (config.contains("data") && config["data"].is_object() && !config["data"].contains("seed"))
    config["data"]["seed"] = seed_;
  // The population checkpoints; a trainer's own checkpoint would have K writers.
  checkpoint_path_ = opts.checkpoint_file;
  training.erase("checkpoint");
  if (!checkpoint_path_.empty()) require_writable_location(checkpoint_path_, "checkpoints");

  RunOverrides mine = trainer_overrides(overrides, *layout_, options_, seed_);
  std::vector<std::string> resumed_files;
  PopulationManifest manifest;
  const std::string resume_file = population_resume_file(overrides.resume_file, checkpoint_path_);
  if (!resume_file.empty()) {
    manifest = resumed_population(resume_file, options_.trainers);
    for (const auto& f : manifest.files) resumed_files.push_back(PopulationManifest::beside(resume_file, f));
    mine.resume_file = resumed_files[static_cast<size_t>(t)];
  }
  run_ = std::make_unique<TrainingRun>(config, mine);
  Trainer& trainer = run_->trainer();
  trainer.set_stop_group(layout_->job());
  if (resume_file.empty())
    draw_hyperparameters(seed_);
  else
    restore_hyperparameters(manifest.hyperparameter_keys, manifest.hyperparameters[static_cast<size_t>(t)]);

  tournament_data_ =
      std::make_unique<io::DatasetSlice>(run_->held_out(), t * options_.tournament_samples, options_.tournament_samples,
                                         "$.training.ltfb.tournament_samples");
  auto tournaments = std::make_unique<TournamentHook>(options_, *layout_, *tournament_data_, seed_);
  tournaments_ = tournaments.get();
  trainer.add_hook(std::move(tournaments));
  if (!checkpoint_path_.empty())
    trainer.add_hook(std::make_unique<PopulationCheckpointHook>(checkpoint_path_, opts.checkpoint_every, *layout_,
                                                                seed_, resumed_files));
}

void PopulationRun::draw_hyperparameters(uint64_t seed) {
  const uint64_t stream = 0x6c7466622d687000ull ^ static_cast<uint64_t>(layout_->trainer());
  optim::Optimizer& optimizer = run_->trainer().optimizer();
  for (size_t k = 0; k < options_.hyperparameters.size(); ++k) {
    const HyperparameterRange& r = options_.hyperparameters[k];
    const double u = rng::uniform(seed, stream, k);
    const double value =
        r.log_scale ? std::exp(std::log(r.min) + u * (std::log(r.max) - std::log(r.min))) : r.min + u * (r.max - r.min);
    optimizer.set_hyperparameter(r.key, value, "$.training.ltfb.hyperparameters");
  }
}

void PopulationRun::restore_hyperparameters(const std::vector<std::string>& keys, const std::vector<double>& values) {
  optim::Optimizer& optimizer = run_->trainer().optimizer();
  std::vector<std::string> own;
  for (const auto& [key, value] : optimizer.hyperparameters()) own.push_back(key);
  if (own != keys)
    throw ConfigError("--resume", "the population checkpoint's hyper-parameters are for another optimizer");
  for (size_t k = 0; k < keys.size(); ++k) optimizer.set_hyperparameter(keys[k], values[k], "--resume");
}

TrainingReport PopulationRun::run() { return run_->run(); }

std::string PopulationRun::describe() const {
  std::string s = "population: " + std::to_string(options_.trainers) + " trainer(s) of " +
                  std::to_string(layout_->ranks_per_trainer()) + " rank(s); ";
  if (options_.selection == Selection::none)
    s += "no tournaments (independent trainers)";
  else
    s += options_.selection_name() + " tournaments every " + std::to_string(options_.round_steps) + " steps on " +
         std::to_string(options_.tournament_samples) + " held-out samples per trainer";
  if (!options_.hyperparameters.empty()) {
    s += "; drawn:";
    for (const auto& r : options_.hyperparameters) s += " " + r.key;
    if (options_.perturb) s += " (perturbed on adoption)";
  }
  return s + "\n" + run_->describe();
}

std::string PopulationRun::summary_table() const {
  const PopulationSummary& sum = summary();
  std::string s = "trainer  validation loss";
  for (const auto& key : sum.hyperparameter_keys) s += "  " + key;
  s += "\n";
  for (size_t t = 0; t < sum.validation_loss.size(); ++t) {
    s += sum.validation_loss[t] >= 0 ? format("%7zu  %15.4f", t, sum.validation_loss[t]) : format("%7zu  %15s", t, "none");
    for (const double v : sum.hyperparameters[t]) s += format("  %.4g", v);
    s += static_cast<int64_t>(t) == sum.best_trainer ? "  <- best\n" : "\n";
  }
  if (sum.best_trainer < 0) s += "no validation set (data.validation_samples is 0): no trainer is named best\n";
  return s + format("%lld tournament round(s), %.3f s in tournaments on this rank", static_cast<long long>(sum.rounds),
                    sum.tournament_seconds);
}

}  // namespace tessera::train
