#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/io/dataset.hpp"
#include "tessera/train/ltfb/ltfb_options.hpp"
#include "tessera/train/ltfb/population_layout.hpp"
#include "tessera/train/trainer_hook.hpp"
#include "tessera/train/trainer_state.hpp"

namespace tessera::train {

/// What a population's run came to, the same on every rank.
struct PopulationSummary {
  std::vector<double> validation_loss;               // each trainer's last validation loss (−1: none)
  std::vector<std::vector<double>> hyperparameters;  // each trainer's, in the optimizer's key order
  std::vector<std::string> hyperparameter_keys;
  int64_t best_trainer = -1;        // by validation loss; −1 without a validation set
  int64_t rounds = 0;               // tournament rounds held in this run
  double tournament_seconds = 0.0;  // this rank's time in rounds: exchanges and evaluations
};

/// A tournament round of LBANN's LTFB as a hook of the training loop: every `round_steps`
/// steps the trainers meet (LtfbOptions::selection).
///
/// Pairwise: the pairs come from tournament_pairs(seed, round), computed alike on every rank.
/// Partners swap model and optimizer state between corresponding ranks (TrainerState); each
/// evaluates both models on its own tournament data; they swap those two numbers, and each
/// model's score is the mean of its metric on the two trainers' data, summed in the same
/// order on both sides, so both sides reach the same decision from the same two numbers (a
/// tie goes to the lower trainer). The loser keeps the winner's parameters, buffers,
/// optimizer state and hyper-parameters (×0.8 or ×1.2 each, within their ranges, when
/// perturbing); the winner restores its own.
///
/// Truncation: every trainer evaluates its own model, the metrics are shared over the peers,
/// and the `truncation_count` worst trainers receive the models of as many best.
///
/// Every round is logged to the metrics JSONL ("tournament": pairs, scores, winners, the
/// hyper-parameters after the round) and in one console line with the population's best and
/// median metric; a round at the run's last step is followed by a validation of the models
/// that leave the run. At the start the hook checks that all trainers will run the same steps, so
/// none waits at a tournament for a partner that has finished.
class TournamentHook final : public TrainerHook {
 public:
  TournamentHook(const LtfbOptions& options, const PopulationLayout& layout, io::Dataset& tournament_data,
                 uint64_t seed);

  void on_run_start(Trainer& trainer, const RunStart& start) override;
  void on_step_end(Trainer& trainer, const StepEnd& step) override;
  void on_run_end(Trainer& trainer, const RunEnd& end) override;
  const PopulationSummary& summary() const { return summary_; }

 private:
  /// One round's outcome as this trainer saw it, before it is shared with the population.
  struct Outcome {
    double metric = 0.0;  // own model on own tournament data, before the round
    int64_t partner = -1;
    double score = 0.0, partner_score = 0.0;  // pairwise: the two agreed scores
    int64_t winner = -1;                      // of this trainer's pair or copy, −1: none
  };
  double metric_of(Trainer& trainer);
  Outcome pairwise_round(Trainer& trainer, int64_t round);
  Outcome truncation_round(Trainer& trainer, int64_t round);
  /// Adopts `winner`'s state, then perturbs the declared hyper-parameters.
  void adopt(Trainer& trainer, const TrainerState& winner, int64_t round);
  void report_round(Trainer& trainer, int64_t round, int64_t step, const Outcome& mine, double seconds);
  /// Validates again after a round at the run's last step, for the report and the log.
  void revalidate(Trainer& trainer, const StepEnd& step);

  LtfbOptions options_;
  const PopulationLayout& layout_;
  io::Dataset& data_;
  uint64_t seed_;
  PopulationSummary summary_;
};

}  // namespace tessera::train
