#include "tessera/search/variation.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/core/rng.hpp"

namespace tessera::search {

double Draws::uniform() {
  // 53 random bits: a double in [0, 1).
  return static_cast<double>(rng::bits(seed_, stream_, next_++) >> 11) * (1.0 / 9007199254740992.0);
}

int64_t Draws::below(int64_t n) {
  return std::min<int64_t>(n - 1, static_cast<int64_t>(uniform() * static_cast<double>(n)));
}

std::pair<Genome, Genome> Variation::crossover(const Genome& a, const Genome& b, Draws& draws) const {
  std::pair<Genome, Genome> children{a, b};
  if (draws.uniform() >= crossover_probability) return children;
  for (size_t g = 0; g < a.size(); ++g)
    if (draws.uniform() < 0.5) std::swap(children.first[g], children.second[g]);
  return children;
}

void Variation::mutate(Genome& genome, const std::vector<int64_t>& levels, Draws& draws) const {
  const double p = mutation_probability > 0 ? mutation_probability : 1.0 / static_cast<double>(genome.size());
  for (size_t g = 0; g < genome.size(); ++g) {
    const int64_t n = levels[g];
    if (n < 2 || draws.uniform() >= p) continue;
    if (draws.uniform() < 0.5) {
      const auto reach = std::max<int64_t>(1, static_cast<int64_t>(std::floor(step_fraction * static_cast<double>(n))));
      const int64_t step = 1 + draws.below(reach);
      int64_t to = draws.uniform() < 0.5 ? genome[g] - step : genome[g] + step;
      if (to < 0 || to >= n) to = genome[g] < n / 2 ? genome[g] + step : genome[g] - step;
      genome[g] = std::clamp<int64_t>(to, 0, n - 1);
    } else {
      const int64_t other = draws.below(n - 1);
      genome[g] = other >= genome[g] ? other + 1 : other;
    }
  }
}

}  // namespace tessera::search
