// The exact layout search: hand-worked chains and DAGs with skip connections, and random
// problems against trying every choice.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "tessera/core/error.hpp"
#include "tessera/plan/layout_search.hpp"

using namespace tessera;
using namespace tessera::plan;

namespace {

SearchNode node(std::vector<int> inputs, std::vector<double> time, std::vector<double> memory = {}) {
  if (memory.empty()) memory.assign(time.size(), 0.0);
  return {std::move(inputs), std::move(time), std::move(memory)};
}

/// Changing layout along an edge costs `cost` seconds; keeping it is free.
std::function<EdgeCost(int, int, int, int)> switching(double cost) {
  return [cost](int producer, int, int a, int b) {
    return EdgeCost{producer != SearchProblem::kInput && a != b ? cost : 0.0, 0.0};
  };
}

void check_same(const SearchResult& a, const SearchResult& b) {
  CHECK(a.feasible == b.feasible);
  CHECK(a.choice == b.choice);
  CHECK(a.time == b.time);
  CHECK(a.memory == b.memory);
}

/// Three nodes, two candidates: the first is cheaper under 0 but the last is much cheaper
/// under 1, and changing layout costs 10, so the greedy start (0) is wrong.
SearchProblem chain() {
  SearchProblem p;
  p.nodes = {node({SearchProblem::kInput}, {1, 3}, {1, 2}), node({0}, {1, 3}, {1, 2}), node({1}, {6, 1}, {1, 2})};
  p.edge = switching(10);
  p.base_memory = 100;
  return p;
}

}  // namespace

TEST_CASE("On a chain the search pays to change layout only where it is worth it", "[plan]") {
  SearchProblem p = chain();
  auto r = search_layout(p);
  CHECK(r.feasible);
  CHECK(r.choice == std::vector<int>{1, 1, 1});  // 3 + 3 + 1; greedy 0, 0, 0 takes 8
  CHECK(r.time == 7);
  CHECK(r.memory == 106);
  check_same(r, search_layout_brute_force(p));

  // 105 bytes rule out all ones; the next fastest that fits is all zeros.
  p.memory_limit = 105;
  r = search_layout(p);
  CHECK(r.feasible);
  CHECK(r.choice == std::vector<int>{0, 0, 0});
  CHECK(r.time == 8);
  CHECK(r.memory == 103);
  check_same(r, search_layout_brute_force(p));
}

TEST_CASE("When nothing fits, the search says so and gives the smallest choice", "[plan]") {
  SearchProblem p = chain();
  p.memory_limit = 102;
  auto r = search_layout(p);
  CHECK_FALSE(r.feasible);
  CHECK(r.choice == std::vector<int>{0, 0, 0});
  CHECK(r.time == 8);
  CHECK(r.memory == 103);
  check_same(r, search_layout_brute_force(p));

  // Among the smallest, the fastest: node 1 under 1 costs no memory more but changes twice.
  p.nodes[1].memory = {1, 1};
  p.nodes[2].time = {6, 6};
  p.memory_limit = 0;
  r = search_layout(p);
  CHECK_FALSE(r.feasible);
  CHECK(r.choice == std::vector<int>{0, 0, 0});
  CHECK(r.memory == 103);
  check_same(r, search_layout_brute_force(p));
}

TEST_CASE("A U-Net's two nested skip connections are charged where their ends differ", "[plan]") {
  // enc1, down1, enc2, down2, bottom, up2, cat2 (up2 + enc2), up1, cat1 (up1 + enc1), out.
  // The deep nodes (3-5) want candidate 1, the rest 0; enc2 alone would also take 1 if its
  // skip edge to cat2 were free (it is 3 dearer: 19 instead of 18).
  SearchProblem p;
  p.nodes = {node({SearchProblem::kInput}, {1, 2}),
             node({0}, {1, 2}),
             node({1}, {3, 1}),
             node({2}, {9, 1}),
             node({3}, {9, 1}),
             node({4}, {9, 1}),
             node({5, 2}, {1, 4}),
             node({6}, {1, 3}),
             node({7, 0}, {1, 3}),
             node({8}, {1, 3})};
  p.edge = switching(3);
  auto r = search_layout(p);
  CHECK(r.feasible);
  CHECK(r.choice == std::vector<int>{0, 0, 0, 1, 1, 1, 0, 0, 0, 0});
  CHECK(r.time == 18);  // 1 + 1 + 3 + 3 * 1 + 4 * 1, and two changes: into down2 and into cat2
  check_same(r, search_layout_brute_force(p));
}

TEST_CASE("A residual block's skip edge is charged", "[plan]") {
  // conv, conv, conv, add (conv2 + conv0), dense. Convs 1 and 2 want 1, conv 0 wants 0; with
  // the skip free, (0, 1, 1, 1, 1) would take 11, but its skip changes layout: 15.
  SearchProblem p;
  p.nodes = {node({SearchProblem::kInput}, {1, 6}), node({0}, {5, 1}), node({1}, {5, 1}), node({2, 0}, {1, 1}),
             node({3}, {1, 3})};
  p.edge = switching(4);
  auto r = search_layout(p);
  CHECK(r.feasible);
  CHECK(r.choice == std::vector<int>{1, 1, 1, 1, 1});
  CHECK(r.time == 12);
  check_same(r, search_layout_brute_force(p));
}

TEST_CASE("A node that reads one output twice pays its edge twice", "[plan]") {
  SearchProblem p;
  p.nodes = {node({SearchProblem::kInput}, {0, 7}), node({0, 0}, {9, 0})};
  p.edge = [](int producer, int, int a, int b) {
    return EdgeCost{producer != SearchProblem::kInput && a != b ? 3.0 : 0.0, a != b ? 1.0 : 0.0};
  };
  auto r = search_layout(p);
  CHECK(r.choice == std::vector<int>{0, 1});  // 0 + 0 + 2 * 3 = 6 beats 7 + 0 and 0 + 9
  CHECK(r.time == 6);
  CHECK(r.memory == 2);
  check_same(r, search_layout_brute_force(p));
}

TEST_CASE("Ties go to the smaller memory, then to the lexicographically smaller choice", "[plan]") {
  SearchProblem p;
  p.nodes = {node({SearchProblem::kInput}, {1, 1, 1}, {2, 1, 1}), node({0}, {1, 1}, {0, 0})};
  auto r = search_layout(p);
  CHECK(r.choice == std::vector<int>{1, 0});
  CHECK(r.memory == 1);
  p.memory_limit = 5;
  CHECK(search_layout(p).choice == std::vector<int>{1, 0});
}

TEST_CASE("Random problems: the search finds what trying every choice finds", "[plan]") {
  std::mt19937 rng(20261124);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int infeasible = 0, limited = 0, with_skips = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const bool dag = trial % 2 == 1;
    const int n = uniform(2, 7);
    SearchProblem p;
    bool skips = false;
    for (int i = 0; i < n; ++i) {
      SearchNode v;
      v.inputs.push_back(i == 0 ? SearchProblem::kInput : i - 1);
      if (dag && i > 0) {
        // Sometimes read an earlier output (or the input) too, sometimes the same one again,
        // sometimes branch off an earlier node instead of the last one.
        while (uniform(0, 2) == 0) {
          v.inputs.push_back(uniform(-1, i - 1));
          skips = true;
        }
        if (uniform(0, 4) == 0) v.inputs[0] = uniform(0, i - 1);
      }
      const int candidates = uniform(1, 4);
      for (int c = 0; c < candidates; ++c) {
        // Small ranges, so that ties are common and the tie-break is tested.
        v.time.push_back(uniform(0, 4));
        v.memory.push_back(uniform(0, 4));
      }
      p.nodes.push_back(v);
    }
    with_skips += skips;
    p.base_memory = uniform(0, 3);
    if (uniform(0, 3) != 0) {
      p.memory_limit = p.base_memory + uniform(0, 4 * n);
      ++limited;
    }
    if (uniform(0, 4) != 0) {
      // A fixed random cost per (producer, consumer, a, b).
      const auto seed = static_cast<unsigned>(uniform(0, 1 << 30));
      p.edge = [seed](int producer, int consumer, int a, int b) {
        std::mt19937 local(seed + static_cast<unsigned>(((producer + 1) * 64 + consumer) * 64 + a * 8 + b));
        return EdgeCost{static_cast<double>(local() % 4), static_cast<double>(local() % 3)};
      };
    }
    INFO("trial " << trial);
    const auto r = search_layout(p);
    const auto b = search_layout_brute_force(p);
    check_same(r, b);
    infeasible += !b.feasible;
  }
  // The sample covers what it should.
  CHECK(infeasible > 20);
  CHECK(limited - infeasible > 100);
  CHECK(with_skips > 100);
}

TEST_CASE("A long chain is searched in one pass", "[plan]") {
  // 200 nodes, 4 candidates: 4^200 choices, 800 labels. Candidate (i % 4) is the fast one,
  // and changing costs less than staying on a slow one.
  SearchProblem p;
  for (int i = 0; i < 200; ++i) {
    std::vector<double> time(4, 5.0);
    time[i % 4] = 1;
    p.nodes.push_back(node({i == 0 ? SearchProblem::kInput : i - 1}, time));
  }
  p.edge = switching(2);
  auto r = search_layout(p);
  CHECK(r.time == 200 * 1 + 199 * 2);
  for (int i = 0; i < 200; ++i) CHECK(r.choice[i] == i % 4);
}

TEST_CASE("Malformed problems are refused", "[plan]") {
  SearchProblem p = chain();
  SECTION("a node without candidates") {
    p.nodes[1].time.clear();
    p.nodes[1].memory.clear();
    CHECK_THROWS_WITH(search_layout(p), Catch::Contains("node 1 has no candidate"));
  }
  SECTION("times and memories of different lengths") {
    p.nodes[2].memory.push_back(1);
    CHECK_THROWS_WITH(search_layout(p), Catch::Contains("node 2 has 2 candidate times but 3 candidate memories"));
  }
  SECTION("an input that is not earlier") {
    p.nodes[1].inputs = {1};
    CHECK_THROWS_WITH(search_layout(p), Catch::Contains("node 1 reads 1, which is neither an earlier node"));
    p.nodes[1].inputs = {-2};
    CHECK_THROWS_AS(search_layout_brute_force(p), Error);
  }
  SECTION("a negative memory") {
    p.nodes[0].memory[1] = -1;
    CHECK_THROWS_WITH(search_layout(p), Catch::Contains("negative"));
  }
  SECTION("a NaN time") {
    p.nodes[0].time[0] = std::nan("");
    CHECK_THROWS_AS(search_layout(p), Error);
  }
  SECTION("an edge with a negative memory") {
    p.edge = [](int, int, int, int) { return EdgeCost{0, -1}; };
    CHECK_THROWS_WITH(search_layout(p), Catch::Contains("edge from"));
  }
}

TEST_CASE("Too many live skip connections, or too many choices to try, are refused", "[plan]") {
  // Every node's output is read by the last: past 2^20 states by node 20.
  SearchProblem p;
  std::vector<int> all;
  for (int i = 0; i < 25; ++i) {
    p.nodes.push_back(node({i == 0 ? SearchProblem::kInput : i - 1}, {1, 2}));
    all.push_back(i);
  }
  p.nodes.push_back(node(all, {1, 2}));
  CHECK_THROWS_WITH(search_layout(p), Catch::Contains("too many outputs are still to be read"));
  CHECK_THROWS_WITH(search_layout_brute_force(p), Catch::Contains("too many to try"));
}

TEST_CASE("An empty graph costs its base memory", "[plan]") {
  SearchProblem p;
  p.base_memory = 7;
  auto r = search_layout(p);
  CHECK(r.feasible);
  CHECK(r.choice.empty());
  CHECK(r.memory == 7);
  p.memory_limit = 6;
  CHECK_FALSE(search_layout(p).feasible);
  check_same(search_layout(p), search_layout_brute_force(p));
}
