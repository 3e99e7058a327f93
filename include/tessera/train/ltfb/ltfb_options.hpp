#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"

namespace tessera::train {

/// A range one optimizer hyper-parameter of a population is drawn from: each trainer starts
/// from its own draw, and perturbation keeps adopted values inside it.
struct HyperparameterRange {
  std::string key;  // the optimizer's config key: "lr", "momentum", "weight_decay", ...
  double min = 0.0, max = 0.0;
  bool log_scale = false;  // drawn log-uniformly (min > 0), else uniformly
};

/// How a tournament round decides which trainers copy which.
enum class Selection {
  pairwise,    // trainers meet in pairs; the loser of each pair adopts the winner's model
  truncation,  // the k worst trainers adopt the models of the k best
  none,        // no tournaments: K independent trainers (a baseline for comparisons)
};

/// The "training.ltfb" section: a population of `trainers` trainers in one job (LBANN's
/// "livermore tournament fast batch"), meeting after every `round_steps` steps from step
/// `start_step` on.
///   {"trainers": K, "round_steps": R, "start_step": S, "tournament_samples": N,
///    "selection": "pairwise" | "truncation" | "none", "truncation_count": k,
///    "metric": "loss" | "accuracy", "perturb": false,
///    "hyperparameters": {"lr": {"min": 0.001, "max": 0.1, "scale": "log"}, ...}}
/// Each trainer holds out N samples at the end of the training set, its own, as tournament
/// data (trainer t the t-th block of N of the last K·N); no trainer trains on any of them.
struct LtfbOptions {
  int64_t trainers = 1;
  int64_t round_steps = 0;
  // No tournament before this step: right after initialisation a model's loss says more
  // about its initial weights than about its hyper-parameters (a high learning rate starts
  // worse and ends better), and early rounds would select for the slow.
  int64_t start_step = 0;
  int64_t tournament_samples = 0;
  Selection selection = Selection::pairwise;
  int64_t truncation_count = 1;
  bool higher_is_better = false;  // "metric": "accuracy" (else the loss, lower is better)
  bool perturb = false;           // adopted hyper-parameters ×0.8 or ×1.2 each, kept in range
  std::vector<HyperparameterRange> hyperparameters;

  /// Reads the section (an empty object gives the defaults: 10 round steps, a tournament set
  /// of `batch_size` samples per trainer, pairwise selection on the loss); errors name
  /// `$.training.ltfb.<key>`. `trainers_override` > 0 is a --trainers flag, which wins over
  /// the section's "trainers".
  static LtfbOptions from_json(ConfigObject& cfg, int64_t batch_size, int64_t trainers_override = 0);
  /// "pairwise", "truncation" or "none".
  std::string selection_name() const;
};

}  // namespace tessera::train
