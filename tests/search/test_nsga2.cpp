#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "tessera/search/nsga2.hpp"

using namespace tessera::search;

namespace {

// ZDT1 and ZDT2 (Zitzler, Deb, Thiele 2000) on a grid: gene g takes levels 0..100, x = level / 100.
constexpr int kGenes = 10;
constexpr int kLevels = 101;

double x_of(int64_t level) { return static_cast<double>(level) / (kLevels - 1); }

Objectives zdt(const Genome& genome, bool concave) {
  const double f1 = x_of(genome[0]);
  double sum = 0.0;
  for (size_t k = 1; k < genome.size(); ++k) sum += x_of(genome[k]);
  const double g = 1.0 + 9.0 * sum / (static_cast<double>(genome.size()) - 1.0);
  const double h = concave ? 1.0 - (f1 / g) * (f1 / g) : 1.0 - std::sqrt(f1 / g);
  return {f1, g * h};
}

/// Mean distance from each point to the true front f2 = 1 − √f1 (or 1 − f1²), sampled finely.
double generational_distance(const std::vector<Objectives>& points, bool concave) {
  double total = 0.0;
  for (const auto& p : points) {
    double best = 1e300;
    for (int k = 0; k <= 10000; ++k) {
      const double f1 = k / 10000.0, f2 = concave ? 1.0 - f1 * f1 : 1.0 - std::sqrt(f1);
      best = std::min(best, std::hypot(p[0] - f1, p[1] - f2));
    }
    total += best;
  }
  return total / static_cast<double>(points.size());
}

/// NSGA-II with (μ+λ) replacement; returns the final population's objectives.
std::vector<Objectives> run(bool concave, uint64_t seed, int generations, size_t mu) {
  const Nsga2 nsga(std::vector<int64_t>(kGenes, kLevels), seed);
  std::vector<Genome> pop = nsga.initial(mu);
  std::vector<Objectives> obj;
  for (const auto& g : pop) obj.push_back(zdt(g, concave));
  for (int gen = 1; gen <= generations; ++gen) {
    const auto children = nsga.offspring(pop, obj, mu, gen);
    std::vector<Genome> all = pop;
    std::vector<Objectives> all_obj = obj;
    for (const auto& c : children) {
      all.push_back(c);
      all_obj.push_back(zdt(c, concave));
    }
    pop.clear();
    obj.clear();
    for (const size_t i : select_survivors(all_obj, mu)) {
      pop.push_back(all[i]);
      obj.push_back(all_obj[i]);
    }
  }
  return obj;
}

}  // namespace

TEST_CASE("Elitist replacement keeps whole fronts, then the least crowded", "[search][nsga2]") {
  // Front 0: 0 (0,4), 1 (1,2), 2 (3,1), 3 (4,0); front 1: 4 (5,5).
  const std::vector<Objectives> p{{0, 4}, {1, 2}, {3, 1}, {4, 0}, {5, 5}};
  CHECK(select_survivors(p, 5) == std::vector<size_t>{0, 1, 2, 3, 4});
  // Cutting front 0 to three keeps both ends and point 1 (crowding 1.5 > 1.25).
  CHECK(select_survivors(p, 3) == std::vector<size_t>{0, 1, 3});
  const Ranking r = rank_population(p);
  CHECK(r.rank == std::vector<int64_t>{0, 0, 0, 0, 1});
  CHECK(r.better(1, 2));  // same rank, less crowded
  CHECK(r.better(2, 4));  // lower rank
}

TEST_CASE("Variation keeps every gene inside its choices and is reproducible", "[search][nsga2]") {
  const std::vector<int64_t> levels{1, 2, 3, 50};
  const Nsga2 nsga(levels, 7);
  const auto pop = nsga.initial(12);
  std::vector<Objectives> obj;
  for (size_t i = 0; i < pop.size(); ++i) obj.push_back({static_cast<double>(pop[i][3]), static_cast<double>(i % 3)});
  const auto kids = nsga.offspring(pop, obj, 11, 1);
  CHECK(kids.size() == 11);
  for (const auto& k : kids)
    for (size_t g = 0; g < levels.size(); ++g) {
      CHECK(k[g] >= 0);
      CHECK(k[g] < levels[g]);
    }
  CHECK(nsga.offspring(pop, obj, 11, 1) == kids);
  CHECK(nsga.offspring(pop, obj, 11, 2) != kids);
  CHECK(Nsga2(levels, 8).initial(12) != pop);
  CHECK_THROWS(Nsga2({3, 0}, 1));
}

TEST_CASE("NSGA-II converges to the ZDT1 and ZDT2 fronts", "[search][nsga2]") {
  // 150 generations of 40 on a 10-variable grid; after 5 generations the population is still
  // about 1.5 from the front, converged ones within 0.01 (measured: below 0.002).
  for (const bool concave : {false, true}) {
    for (const uint64_t seed : {1u, 2u}) {
      const auto front = run(concave, seed, 150, 40);
      const double gd = generational_distance(front, concave);
      INFO((concave ? "ZDT2" : "ZDT1") << " seed " << seed << ": GD " << gd);
      CHECK(gd < 0.01);
      // Spread: the population covers most of f1's range, not one corner.
      double lo = 1, hi = 0;
      for (const auto& p : front) {
        lo = std::min(lo, p[0]);
        hi = std::max(hi, p[0]);
      }
      CHECK(hi - lo > 0.8);
    }
  }
}

TEST_CASE("Repeated offspring are mutated until new", "[search][nsga2]") {
  const Nsga2 nsga({4, 4, 4}, 3);
  Draws draws(3, 1);
  const std::vector<Genome> trained{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  auto seen = [&](const Genome& g) { return std::find(trained.begin(), trained.end(), g) != trained.end(); };
  const Genome g = nsga.made_new({0, 0, 0}, seen, draws);
  CHECK(!seen(g));
  CHECK(nsga.made_new({3, 3, 3}, seen, draws) == Genome{3, 3, 3});  // already new: unchanged
  // What counts as seen is the caller's: here the last gene has no effect.
  auto same_network = [&](const Genome& g) { return g[0] == 0 && g[1] == 0; };
  const Genome h = nsga.made_new({0, 0, 2}, same_network, draws);
  CHECK(!(h[0] == 0 && h[1] == 0));
  // A space with nothing new left returns the last attempt.
  const Nsga2 tiny({1}, 3);
  CHECK(tiny.made_new(
            {0}, [](const Genome&) { return true; }, draws) == Genome{0});
}

TEST_CASE("Random search draws again until a genome is new", "[search][nsga2]") {
  const Nsga2 nsga({2, 2}, 5);
  Draws draws(5, 2);
  // Three of the four genomes are known: every draw must end on the fourth.
  auto seen = [](const Genome& g) { return !(g[0] == 1 && g[1] == 1); };
  for (int k = 0; k < 20; ++k) CHECK(nsga.random_new(seen, draws) == Genome{1, 1});
  // Nothing new left: the last draw, still inside the choices.
  const Genome g = nsga.random_new([](const Genome&) { return true; }, draws);
  CHECK((g[0] >= 0 && g[0] < 2 && g[1] >= 0 && g[1] < 2));
}
