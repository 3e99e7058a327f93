#pragma once
#include <cstdint>
#include <iosfwd>
#include <vector>

#include "tessera/plan/step_schedule.hpp"

namespace tessera::plan {

/// One tournament round of a population of trainers (LTFB, docs/ltfb.md) as every rank runs
/// it, for the simulator: K trainers, trainer t on the consecutive ranks [t·n, (t+1)·n) with
/// the same layout, each trains `round_steps` steps (its StepSchedule with ranks shifted by
/// t·n), then meets its partner as pairwise selection does: evaluates both models on its
/// tournament data (twice the step's forward compute, scaled from the trainer's batch to the
/// tournament samples), swaps the two scores with its partner, and sends its block of the
/// model state (StepSchedule::state_bytes) to the same rank of the partner while receiving
/// the partner's. Every pair exchanges (both states cross, as the loser's adoption needs the
/// winner's and the schedule cannot know who wins). The pairs are the consecutive pairs of a
/// permutation of the trainers drawn from a fixed seed, as LTFB draws one per round; with an
/// odd K the last trainer of the permutation sits the round out.
///
/// Not modelled: the forward pass's collectives during the evaluation (halos, statistics sums
/// of a split trainer), checkpoint writes, the truncation selection.
class PopulationSchedule {
 public:
  /// `trainer`: one trainer's step; `tournament_batches`: tournament samples per trainer over
  /// the trainer's batch; `tournaments` false: independent trainers (selection "none").
  PopulationSchedule(const StepSchedule& trainer, int trainers, int64_t round_steps, double tournament_batches,
                     bool tournaments = true, unsigned seed = 1);

  int ranks() const { return trainer_.ranks() * trainers_; }
  int trainers() const { return trainers_; }
  int64_t round_steps() const { return round_steps_; }
  /// The trainer `t` meets this round, or -1 when it sits out.
  int partner(int t) const { return partner_[static_cast<size_t>(t)]; }
  /// Rank `rank`'s operations over the round, in order.
  std::vector<ScheduleOp> rank_ops(int rank) const;
  /// Writes the schedule file; its predicted figure is the planner's step times round_steps.
  void write(std::ostream& out) const;

 private:
  const StepSchedule& trainer_;
  int trainers_ = 1;
  int64_t round_steps_ = 1;
  double tournament_batches_ = 1;
  std::vector<int> partner_;
};

}  // namespace tessera::plan
