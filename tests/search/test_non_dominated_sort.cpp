#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/search/non_dominated_sort.hpp"

using namespace tessera::search;
using Fronts = std::vector<std::vector<size_t>>;

TEST_CASE("Dominance needs no worse everywhere and better somewhere", "[search][nsga2]") {
  CHECK(dominates({1, 2}, {2, 2}));
  CHECK_FALSE(dominates({2, 2}, {1, 2}));
  CHECK_FALSE(dominates({1, 2}, {1, 2}));  // equal points
  CHECK_FALSE(dominates({1, 3}, {2, 2}));  // a trade-off
  CHECK(dominates({0}, {1}));
}

TEST_CASE("Non-dominated sort of a hand-worked two-objective set", "[search][nsga2]") {
  // 0 (1,5) 1 (2,3) 2 (4,1) form the first front; 3 (3,4) is dominated by 1; 4 (5,5) by 3
  // (and 0, 1, 2); 5 (2,6) by 0 only.
  const std::vector<Objectives> p{{1, 5}, {2, 3}, {4, 1}, {3, 4}, {5, 5}, {2, 6}};
  CHECK(non_dominated_sort(p) == Fronts{{0, 1, 2}, {3, 5}, {4}});
}

TEST_CASE("Ties and duplicates share a front", "[search][nsga2]") {
  // Two copies of (1,1) dominate everything else; (1,2) and (2,1) tie on one objective each.
  const std::vector<Objectives> p{{2, 1}, {1, 1}, {1, 2}, {1, 1}, {2, 2}, {2, 2}};
  CHECK(non_dominated_sort(p) == Fronts{{1, 3}, {0, 2}, {4, 5}});
}

TEST_CASE("With one objective the fronts are the distinct values in order", "[search][nsga2]") {
  const std::vector<Objectives> p{{3}, {1}, {2}, {1}, {3}};
  CHECK(non_dominated_sort(p) == Fronts{{1, 3}, {2}, {0, 4}});
}

TEST_CASE("Three objectives: a trade-off surface and what it dominates", "[search][nsga2]") {
  // 0..2 are the unit vectors (mutually non-dominated), 3 (0.5,0.5,0.5) trades off against
  // them too; 4 (1,1,1) is dominated by every one of them; 5 (0.5,0.5,2) only by 3.
  const std::vector<Objectives> p{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.5, 0.5, 0.5}, {1, 1, 1}, {0.5, 0.5, 2}};
  CHECK(non_dominated_sort(p) == Fronts{{0, 1, 2, 3}, {4, 5}});
}

TEST_CASE("Points with different objective counts are refused", "[search][nsga2]") {
  CHECK(non_dominated_sort({}).empty());
  CHECK_THROWS_AS(non_dominated_sort({{1, 2}, {1}}), tessera::Error);
  CHECK_THROWS_AS(non_dominated_sort({{}}), tessera::Error);
}
