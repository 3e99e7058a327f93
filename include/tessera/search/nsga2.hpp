#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "tessera/search/non_dominated_sort.hpp"
#include "tessera/search/variation.hpp"

namespace tessera::search {

/// Each member's Pareto rank (its front's number) and crowding distance within its front.
struct Ranking {
  std::vector<int64_t> rank;
  std::vector<double> crowding;

  /// NSGA-II's crowded comparison: lower rank wins, then larger crowding distance.
  bool better(size_t a, size_t b) const;
};

Ranking rank_population(const std::vector<Objectives>& points);

/// Elitist (μ+λ) replacement: of `points` (parents and offspring together) the `mu` indices
/// that survive — whole fronts in rank order, the front that does not fit whole cut by
/// descending crowding distance (ties: lower index). Ascending order.
std::vector<size_t> select_survivors(const std::vector<Objectives>& points, size_t mu);

/// NSGA-II (Deb, Pratap, Agarwal, Meyarivan, IEEE TEC 6(2), 2002) over discrete genes, with
/// no notion of what a candidate is: the caller evaluates genomes and reports their
/// objectives. Every draw comes from (seed, generation), so a search restarted from a saved
/// generation continues exactly as the uninterrupted one.
class Nsga2 {
 public:
  /// `levels[g]` ≥ 1 choices for gene g.
  Nsga2(std::vector<int64_t> levels, uint64_t seed, Variation variation = {});

  const std::vector<int64_t>& levels() const { return levels_; }
  /// Generation 0: `count` genomes drawn uniformly.
  std::vector<Genome> initial(size_t count) const;
  /// One genome drawn uniformly from draw stream `stream` (used to replace invalid ones).
  Genome random_genome(Draws& draws) const;
  /// A genome drawn uniformly until `seen` says it is new (random search's twin of
  /// made_new), at most `tries` draws after the first; the last draw if none is new.
  Genome random_new(const std::function<bool(const Genome&)>& seen, Draws& draws, int tries = 50) const;
  /// `count` offspring of `parents` (with their objectives) for generation `generation`:
  /// parents by binary tournament on the crowded comparison, then crossover and mutation.
  std::vector<Genome> offspring(const std::vector<Genome>& parents, const std::vector<Objectives>& objectives,
                                size_t count, int64_t generation) const;
  /// `genome` mutated until `seen` says it is new (at most `tries` rounds of mutation, each
  /// gene then mutating with probability 1/2), so that a search does not spend its training
  /// on a candidate it has trained already. `seen` judges the candidate, not the genome: two
  /// genomes that differ only in a gene with no effect (the filters of an absent block) are
  /// the same network. Returns the last attempt if none is new (a space nearly exhausted).
  Genome made_new(Genome genome, const std::function<bool(const Genome&)>& seen, Draws& draws, int tries = 50) const;
  /// A stream id for the draws of one purpose in one generation.
  static uint64_t stream(uint64_t purpose, int64_t generation);

 private:
  std::vector<int64_t> levels_;
  uint64_t seed_;
  Variation variation_;
};

}  // namespace tessera::search
