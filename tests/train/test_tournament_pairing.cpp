#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>

#include "tessera/train/ltfb/tournament_pairing.hpp"

using namespace tessera::train;

TEST_CASE("Tournament pairs cover every trainer once, the odd one out sitting", "[train][ltfb]") {
  for (int64_t trainers = 1; trainers <= 9; ++trainers) {
    for (uint64_t seed = 0; seed < 20; ++seed) {
      for (int64_t round = 1; round <= 5; ++round) {
        const auto pairs = tournament_pairs(seed, round, trainers);
        REQUIRE(static_cast<int64_t>(pairs.size()) == trainers / 2);
        std::set<int64_t> seen;
        for (const auto& [a, b] : pairs) {
          CHECK(a < b);
          CHECK(b < trainers);
          seen.insert(a);
          seen.insert(b);
        }
        CHECK(static_cast<int64_t>(seen.size()) == 2 * (trainers / 2));
        // The same arguments give the same pairs: what lets every rank pair without messages.
        CHECK(tournament_pairs(seed, round, trainers) == pairs);
      }
    }
  }
}

TEST_CASE("Tournament pairs change from round to round and seed to seed", "[train][ltfb]") {
  std::set<std::vector<std::pair<int64_t, int64_t>>> distinct;
  for (int64_t round = 0; round < 30; ++round) distinct.insert(tournament_pairs(7, round, 8));
  CHECK(distinct.size() > 10);  // 105 pairings of 8 exist
  std::set<int64_t> sitting_out;
  for (int64_t round = 0; round < 40; ++round) {
    std::set<int64_t> paired;
    for (const auto& [a, b] : tournament_pairs(3, round, 5)) paired.insert({a, b});
    for (int64_t t = 0; t < 5; ++t)
      if (!paired.count(t)) sitting_out.insert(t);
  }
  CHECK(sitting_out.size() == 5);  // every trainer sits out some round
  CHECK(tournament_pairs(1, 3, 8) != tournament_pairs(2, 3, 8));
}

TEST_CASE("Truncation pairs the k best with the k worst, best with worst", "[train][ltfb]") {
  const std::vector<double> loss{0.5, 0.1, 0.9, 0.3, 0.7, 0.2};
  // Ranked best first: 1 (0.1), 5 (0.2), 3 (0.3), 0 (0.5), 4 (0.7), 2 (0.9).
  const auto two = truncation_pairs(loss, 2, false);
  REQUIRE(two.size() == 2);
  CHECK(two[0] == std::make_pair<int64_t, int64_t>(1, 2));
  CHECK(two[1] == std::make_pair<int64_t, int64_t>(5, 4));
  const auto by_accuracy = truncation_pairs(loss, 1, true);
  CHECK(by_accuracy[0] == std::make_pair<int64_t, int64_t>(2, 1));
  CHECK(truncation_pairs(loss, 0, false).empty());
  CHECK_THROWS(truncation_pairs(loss, 4, false));
}

TEST_CASE("A NaN metric ranks worst and ties go to the lower trainer", "[train][ltfb]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto pairs = truncation_pairs({nan, 0.4, 0.4, 0.9}, 1, false);
  CHECK(pairs[0] == std::make_pair<int64_t, int64_t>(1, 0));
  CHECK(better_metric(0.1, nan, false));
  CHECK_FALSE(better_metric(nan, 0.1, true));
  CHECK_FALSE(better_metric(0.4, 0.4, false));
}
