#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace tessera::search {

/// A candidate as one choice per gene: gene g holds a level in [0, levels[g]).
using Genome = std::vector<int64_t>;

/// A reproducible stream of random draws: draw k is a pure function of (seed, stream, k)
/// (core/rng.hpp), so a search replays exactly from its seed on any rank.
class Draws {
 public:
  Draws(uint64_t seed, uint64_t stream) : seed_(seed), stream_(stream) {}
  /// Uniform in [0, 1).
  double uniform();
  /// Uniform integer in [0, n); n ≥ 1.
  int64_t below(int64_t n);

 private:
  uint64_t seed_, stream_, next_ = 0;
};

/// NSGA-II's variation over discrete choices.
///  - Uniform crossover: with probability `crossover_probability` each gene of the two
///    children comes from either parent by a fair coin; otherwise the children are copies.
///  - Mutation: each gene mutates with probability `mutation_probability` (≤ 0: 1 / genes).
///    Half of the mutations move to a neighbouring level (up to `step_fraction` of the levels
///    away, at least one), the other half to any other level: choices are usually ordered
///    (filters, kernel sizes, rates), where small steps refine, and a uniform jump keeps
///    unordered ones (activations) and escapes.
struct Variation {
  double crossover_probability = 0.9;
  double mutation_probability = -1.0;
  double step_fraction = 0.05;

  std::pair<Genome, Genome> crossover(const Genome& a, const Genome& b, Draws& draws) const;
  void mutate(Genome& genome, const std::vector<int64_t>& levels, Draws& draws) const;
};

}  // namespace tessera::search
