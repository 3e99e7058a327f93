#include "tessera/search/nsga2.hpp"

#include <algorithm>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/search/crowding_distance.hpp"

namespace tessera::search {

bool Ranking::better(size_t a, size_t b) const {
  if (rank[a] != rank[b]) return rank[a] < rank[b];
  return crowding[a] > crowding[b];
}

Ranking rank_population(const std::vector<Objectives>& points) {
  Ranking r;
  r.rank.assign(points.size(), 0);
  r.crowding.assign(points.size(), 0.0);
  const auto fronts = non_dominated_sort(points);
  for (size_t f = 0; f < fronts.size(); ++f) {
    const std::vector<double> d = crowding_distance(points, fronts[f]);
    for (size_t k = 0; k < fronts[f].size(); ++k) {
      r.rank[fronts[f][k]] = static_cast<int64_t>(f);
      r.crowding[fronts[f][k]] = d[k];
    }
  }
  return r;
}

std::vector<size_t> select_survivors(const std::vector<Objectives>& points, size_t mu) {
  std::vector<size_t> survivors;
  for (const auto& front : non_dominated_sort(points)) {
    if (survivors.size() >= mu) break;
    if (survivors.size() + front.size() <= mu) {
      survivors.insert(survivors.end(), front.begin(), front.end());
      continue;
    }
    const std::vector<double> d = crowding_distance(points, front);
    std::vector<size_t> order(front.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return d[a] > d[b]; });
    for (size_t k = 0; survivors.size() < mu; ++k) survivors.push_back(front[order[k]]);
  }
  std::sort(survivors.begin(), survivors.end());
  return survivors;
}

Nsga2::Nsga2(std::vector<int64_t> levels, uint64_t seed, Variation variation)
    : levels_(std::move(levels)), seed_(seed), variation_(variation) {
  if (levels_.empty()) throw Error("NSGA-II needs at least one gene");
  for (size_t g = 0; g < levels_.size(); ++g)
    if (levels_[g] < 1) throw Error("NSGA-II: gene " + std::to_string(g) + " has no choices");
}

Genome Nsga2::made_new(Genome genome, const std::function<bool(const Genome&)>& seen, Draws& draws, int tries) const {
  Variation eager = variation_;
  eager.mutation_probability = 0.5;
  for (int t = 0; t < tries && seen(genome); ++t) eager.mutate(genome, levels_, draws);
  return genome;
}

uint64_t Nsga2::stream(uint64_t purpose, int64_t generation) {
  return rng::mix(purpose ^ rng::mix(static_cast<uint64_t>(generation)));
}

Genome Nsga2::random_genome(Draws& draws) const {
  Genome g(levels_.size());
  for (size_t k = 0; k < g.size(); ++k) g[k] = draws.below(levels_[k]);
  return g;
}

Genome Nsga2::random_new(const std::function<bool(const Genome&)>& seen, Draws& draws, int tries) const {
  Genome genome = random_genome(draws);
  for (int t = 0; t < tries && seen(genome); ++t) genome = random_genome(draws);
  return genome;
}

std::vector<Genome> Nsga2::initial(size_t count) const {
  Draws draws(seed_, stream(0x696e6974ull, 0));
  std::vector<Genome> population;
  for (size_t i = 0; i < count; ++i) population.push_back(random_genome(draws));
  return population;
}

std::vector<Genome> Nsga2::offspring(const std::vector<Genome>& parents, const std::vector<Objectives>& objectives,
                                     size_t count, int64_t generation) const {
  if (parents.empty() || parents.size() != objectives.size())
    throw Error("NSGA-II: offspring need parents, each with its objectives");
  const Ranking ranking = rank_population(objectives);
  Draws draws(seed_, stream(0x6f6666737072ull, generation));
  const auto n = static_cast<int64_t>(parents.size());
  auto tournament = [&]() {
    const auto a = static_cast<size_t>(draws.below(n)), b = static_cast<size_t>(draws.below(n));
    return ranking.better(b, a) ? b : a;
  };
  std::vector<Genome> children;
  while (children.size() < count) {
    const size_t a = tournament(), b = tournament();
    auto [c1, c2] = variation_.crossover(parents[a], parents[b], draws);
    variation_.mutate(c1, levels_, draws);
    variation_.mutate(c2, levels_, draws);
    children.push_back(std::move(c1));
    if (children.size() < count) children.push_back(std::move(c2));
  }
  return children;
}

}  // namespace tessera::search
