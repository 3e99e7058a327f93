#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::plan {

/// What moving a tensor between two layouts costs: time per training step (forward and
/// backward) and bytes held per rank for the whole step.
struct EdgeCost {
  double time = 0, memory = 0;
};

/// One node of the graph being laid out, with its cost under each candidate layout.
struct SearchNode {
  std::vector<int> inputs;     // earlier nodes; SearchProblem::kInput for the model input
  std::vector<double> time;    // per candidate: seconds per step (compute and own communication)
  std::vector<double> memory;  // per candidate: bytes per rank held for the step
};

/// The layout problem: a DAG in topological order (each node reads only earlier ones), one
/// candidate per node to choose, minimising the step time (node times plus edge times) with
/// the memory per rank (base plus node and edge memories) at most `memory_limit`.
struct SearchProblem {
  static constexpr int kInput = -1;
  std::vector<SearchNode> nodes;
  /// The cost of edge producer → consumer when they run candidates a and b (producer kInput:
  /// a is 0). Unset: every edge is free.
  std::function<EdgeCost(int producer, int consumer, int a, int b)> edge;
  double base_memory = 0;
  double memory_limit = std::numeric_limits<double>::infinity();
};

/// The answer. When no choice fits, `feasible` is false and `choice` is the choice with the
/// smallest memory (its time and memory given), so the caller can say how far off it is.
struct SearchResult {
  bool feasible = false;
  std::vector<int> choice;  // per node, the candidate index
  double time = 0, memory = 0;
};

/// Thrown by search_layout when the outputs still to be read after some node have too many
/// candidate combinations for the exact search (a caller may keep fewer candidates and retry).
class SearchTooLarge : public Error {
 public:
  using Error::Error;
};

/// The exact optimum (ties broken towards the smaller memory, then the lexicographically
/// smaller choice), by dynamic programming over the nodes in order, whose state is the
/// candidates of the outputs still to be read (one for a chain: Dryden et al.'s shortest path;
/// a few for skip connections), keeping the Pareto set of (time, memory) per state.
/// Throws tessera::Error for a malformed problem (a node without candidates, times and
/// memories of different lengths, an input not earlier, a NaN cost or a negative memory) and
/// SearchTooLarge when more than 2^20 candidate tuples of outputs still to be read would have to
/// be weighed.
SearchResult search_layout(const SearchProblem& problem);
/// The same by trying every choice, at most 10^6 of them: for tests on small problems.
SearchResult search_layout_brute_force(const SearchProblem& problem);

}  // namespace tessera::plan
