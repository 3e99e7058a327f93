#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/parallel/communicator.hpp"
#include "tessera/search/nsga2.hpp"
#include "tessera/search/objective.hpp"
#include "tessera/search/search_space.hpp"
#include "tessera/search/search_state.hpp"
#include "tessera/train/ltfb/population_layout.hpp"

namespace tessera::search {

/// Settings of `tessera search` beside the space file.
struct SearchOptions {
  std::string output_dir;  // population.jsonl, front.jsonl, front.svg, front/, search_state.json
  bool resume = false;     // continue from output_dir/search_state.json
  int64_t trainers = 0;    // overrides budget.trainers when > 0
  std::string backend = "auto";
  bool progress = true;
};

/// An NSGA-II architecture search as one job. The job's ranks form K trainers
/// (train::PopulationLayout); a generation's candidates are dealt out round-robin, candidate
/// i to trainer i mod K, each trained on its trainer's ranks (data- or spatially parallel as
/// its run config says) for budget.steps steps, its objectives measured there and shared
/// with every rank. Then NSGA-II's elitist replacement keeps the best `population` of parents
/// and offspring. After each generation the outputs and the state are rewritten atomically.
class SearchRun {
 public:
  SearchRun(SearchSpace space, SearchOptions options, parallel::Communicator job);
  /// Runs the remaining generations; returns the state after the last one finished. A stop
  /// request (core/stop_request.hpp) ends a candidate's training after its current step and
  /// the search at the end of that generation's round, which is not saved: --resume repeats it.
  SearchState run();
  /// The stop signal that ended the search early (the same on every rank), 0: none.
  int stop_signal() const { return stop_signal_; }

  const train::PopulationLayout& layout() const { return *layout_; }
  /// Paths of the outputs.
  std::string output(const std::string& name) const;

 private:
  /// Generation g's genomes whose networks no earlier candidate trained (nor an earlier one
  /// of this generation): the first population drawn uniformly, then NSGA-II's offspring or
  /// random draws, each redrawn or mutated until new; one still not new is left out. Empty
  /// when no candidate is new: the search has nothing left to train near its population.
  std::vector<Genome> new_candidates(int64_t generation) const;
  /// `genomes` made valid: each invalid one is reported and replaced by a fresh draw.
  std::vector<Candidate> validated(std::vector<Genome> genomes, int64_t generation);
  /// Trains `candidates` over the trainers; appends their records to the history and
  /// returns their indices in it.
  std::vector<size_t> evaluate(const std::vector<Candidate>& candidates, int64_t generation);
  Objectives train_one(const Candidate& candidate, uint64_t seed, std::string& failure, int& stop);
  void write_outputs() const;
  void report_generation(const std::vector<size_t>& trained, double seconds) const;

  SearchSpace space_;
  SearchOptions options_;
  parallel::Communicator job_;
  std::unique_ptr<train::PopulationLayout> layout_;
  std::vector<std::unique_ptr<Objective>> objectives_;
  Nsga2 nsga_;
  SearchState state_;
  int stop_signal_ = 0;
};

}  // namespace tessera::search
