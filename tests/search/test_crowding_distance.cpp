#include <catch2/catch.hpp>

#include <limits>

#include "tessera/search/crowding_distance.hpp"

using namespace tessera::search;

namespace {
const double inf = std::numeric_limits<double>::infinity();
}

TEST_CASE("Crowding distance of a hand-worked front", "[search][nsga2]") {
  // Sorted by f1: 0 (0,4) 1 (1,2) 2 (3,1) 3 (4,0); ranges 4 and 4.
  // Point 1: (3-0)/4 + (4-1)/4 = 1.5; point 2: (4-1)/4 + (2-0)/4 = 1.25.
  const std::vector<Objectives> p{{0, 4}, {1, 2}, {3, 1}, {4, 0}};
  const auto d = crowding_distance(p, {0, 1, 2, 3});
  CHECK(d[0] == inf);
  CHECK(d[1] == Approx(1.5));
  CHECK(d[2] == Approx(1.25));
  CHECK(d[3] == inf);
}

TEST_CASE("Crowding distance follows the front's order and ignores other points", "[search][nsga2]") {
  const std::vector<Objectives> p{{9, 9}, {4, 0}, {1, 2}, {0, 4}, {3, 1}};
  const auto d = crowding_distance(p, {4, 2, 1, 3});
  CHECK(d[0] == Approx(1.25));
  CHECK(d[1] == Approx(1.5));
  CHECK(d[2] == inf);
  CHECK(d[3] == inf);
}

TEST_CASE("Crowding distance with duplicates, one objective and flat objectives", "[search][nsga2]") {
  // Duplicates: ties are ordered by index, so of two equal points the lower one sits nearer
  // the lower end in every objective. f1 order 0,1,2,3: 1 gets (1-0)/3, 2 gets (3-1)/3;
  // f2 order 3,1,2,0: 1 gets (1-0)/3, 2 gets (3-1)/3.
  const std::vector<Objectives> dup{{0, 3}, {1, 1}, {1, 1}, {3, 0}};
  const auto d = crowding_distance(dup, {0, 1, 2, 3});
  CHECK(d[0] == inf);
  CHECK(d[1] == Approx(2.0 / 3.0));
  CHECK(d[2] == Approx(4.0 / 3.0));
  CHECK(d[3] == inf);
  // One objective: the ends are infinite, the inner points their neighbours' gap.
  const std::vector<Objectives> one{{0}, {1}, {3}, {4}};
  const auto d1 = crowding_distance(one, {0, 1, 2, 3});
  CHECK(d1[1] == Approx(0.75));
  CHECK(d1[2] == Approx(0.75));
  // A flat objective adds nothing (no division by a zero range).
  const std::vector<Objectives> flat{{0, 5}, {1, 5}, {2, 5}};
  const auto d2 = crowding_distance(flat, {0, 1, 2});
  CHECK(d2[1] == Approx(1.0));
  // Fronts of one or two points are all ends.
  CHECK(crowding_distance(flat, {1}) == std::vector<double>{inf});
  CHECK(crowding_distance(flat, {0, 2}) == std::vector<double>{inf, inf});
}

TEST_CASE("Crowding distance with three objectives", "[search][nsga2]") {
  // Each objective sorts the four points differently; point 3 is inside in all three.
  const std::vector<Objectives> p{{0, 2, 1}, {2, 0, 2}, {1, 1, 0}, {0.5, 1.5, 1.5}};
  const auto d = crowding_distance(p, {0, 1, 2, 3});
  // f1 order 0,3,2,1: 3 gets (1-0)/2; f2 order 1,2,3,0: 3 gets (2-1)/2;
  // f3 order 2,0,3,1: 3 gets (2-1)/2, 0 gets (1.5-0)/2.
  CHECK(d[3] == Approx(1.5));
  CHECK(d[0] == inf);  // an end in f1
  CHECK(d[1] == inf);
  CHECK(d[2] == inf);
}
