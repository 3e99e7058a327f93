#include "tessera/plan/layout_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <string>
#include <utility>

#include "tessera/core/error.hpp"

namespace tessera::plan {
namespace {

// Every candidate tuple of the live outputs is a state; past this many the exact search would
// take too long and too much memory, so it refuses rather than guess.
constexpr size_t kMaxStates = size_t{1} << 20;
constexpr double kMaxCombinations = 1e6;

std::string where(size_t node) { return "layout search: node " + std::to_string(node); }

void validate(const SearchProblem& problem) {
  if (std::isnan(problem.base_memory) || std::isnan(problem.memory_limit))
    throw Error("layout search: the base memory and the memory limit must be numbers");
  for (size_t i = 0; i < problem.nodes.size(); ++i) {
    const SearchNode& node = problem.nodes[i];
    if (node.time.empty()) throw Error(where(i) + " has no candidate layout");
    if (node.time.size() != node.memory.size())
      throw Error(where(i) + " has " + std::to_string(node.time.size()) + " candidate times but " +
                  std::to_string(node.memory.size()) + " candidate memories");
    for (int input : node.inputs)
      if (input != SearchProblem::kInput && (input < 0 || static_cast<size_t>(input) >= i))
        throw Error(where(i) + " reads " + std::to_string(input) +
                    ", which is neither an earlier node nor the model input (-1)");
    for (size_t c = 0; c < node.time.size(); ++c) {
      if (std::isnan(node.time[c])) throw Error(where(i) + ": candidate " + std::to_string(c) + " has no time (NaN)");
      // The memory limit prunes partial choices, which is exact only while memory never shrinks.
      if (!(node.memory[c] >= 0))
        throw Error(where(i) + ": candidate " + std::to_string(c) + " has a negative or NaN memory");
    }
  }
}

/// The edge's cost, checked as the node costs are.
EdgeCost edge_cost(const SearchProblem& problem, int producer, size_t consumer, int a, int b) {
  if (!problem.edge) return {};
  const EdgeCost e = problem.edge(producer, static_cast<int>(consumer), a, b);
  if (std::isnan(e.time) || !(e.memory >= 0))
    throw Error(where(consumer) + ": the edge from " + std::to_string(producer) + " (candidates " + std::to_string(a) +
                " -> " + std::to_string(b) + ") has a NaN time or a negative or NaN memory");
  return e;
}

/// Adds node i's cost under candidate c (its own, then its input edges in order) to (time,
/// memory). The brute force and the search add in this one order, so a choice's totals are
/// bitwise the same in both.
template <typename ProducerChoice, typename Edge>
void add_node(const SearchNode& node, int c, ProducerChoice producer_choice, Edge edge, double& time, double& memory) {
  time += node.time[c];
  memory += node.memory[c];
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const EdgeCost e = edge(k, producer_choice(k), c);
    time += e.time;
    memory += e.memory;
  }
}

/// What the search minimises first: the step time (then memory), the memory (then time), or
/// time + lambda·memory (then time), whose optimum is a fast layout that holds less.
struct Objective {
  enum Kind { time, memory, weighted } kind = time;
  double lambda = 0;  // seconds per byte, for `weighted`
};

/// `a` before `b` under the objective (neither the choice nor the order of finding counts).
bool better(const Objective& objective, double time_a, double memory_a, double time_b, double memory_b) {
  switch (objective.kind) {
    case Objective::time: return time_a < time_b || (time_a == time_b && memory_a < memory_b);
    case Objective::memory: return memory_a < memory_b || (memory_a == memory_b && time_a < time_b);
    case Objective::weighted: {
      const double a = time_a + objective.lambda * memory_a, b = time_b + objective.lambda * memory_b;
      return a < b || (a == b && time_a < time_b);
    }
  }
  return false;
}

/// The outputs still to be read after each node, and how a state (their candidates) is
/// numbered: mixed radix, one digit per live output in node order.
struct LiveSets {
  std::vector<std::vector<int>> nodes;       // per node i: live outputs after i, ascending
  std::vector<std::vector<size_t>> strides;  // their digits' place values
  std::vector<size_t> states;                // how many states after node i
};

LiveSets live_sets(const SearchProblem& problem) {
  const size_t n = problem.nodes.size();
  std::vector<int> last_read(n, -1);
  for (size_t i = 0; i < n; ++i)
    for (int input : problem.nodes[i].inputs)
      if (input != SearchProblem::kInput) last_read[input] = static_cast<int>(i);
  LiveSets live;
  live.nodes.resize(n);
  live.strides.resize(n);
  live.states.resize(n);
  for (size_t i = 0; i < n; ++i) {
    size_t states = 1;
    for (size_t j = 0; j <= i; ++j) {
      if (last_read[j] <= static_cast<int>(i)) continue;
      const size_t radix = problem.nodes[j].time.size();
      if (states > kMaxStates / radix)
        throw SearchTooLarge(where(i) +
                             ": too many outputs are still to be read after it (skip connections) for the exact "
                             "layout search: more than " +
                             std::to_string(kMaxStates) + " combinations of their candidates");
      live.nodes[i].push_back(static_cast<int>(j));
      live.strides[i].push_back(states);
      states *= radix;
    }
    live.states[i] = states;
  }
  return live;
}

/// Edge costs per node and input, [a * candidates + b]: asked of the problem once each, for
/// every pass of the search.
using EdgeTables = std::vector<std::vector<std::vector<EdgeCost>>>;

EdgeTables edge_tables(const SearchProblem& problem) {
  EdgeTables edges(problem.nodes.size());
  for (size_t i = 0; i < problem.nodes.size(); ++i) {
    const size_t cols = problem.nodes[i].time.size();
    for (int p : problem.nodes[i].inputs) {
      const size_t rows = p == SearchProblem::kInput ? 1 : problem.nodes[p].time.size();
      std::vector<EdgeCost> table(rows * cols);
      for (size_t a = 0; a < rows; ++a)
        for (size_t b = 0; b < cols; ++b)
          table[a * cols + b] = edge_cost(problem, p, i, static_cast<int>(a), static_cast<int>(b));
      edges[i].push_back(std::move(table));
    }
  }
  return edges;
}

/// How node i extends a state of the outputs live before it: the candidates its inputs run (0
/// for the model input), and the state after it, to which its own candidate c adds
/// c · own_stride when its output stays live.
struct Extension {
  std::vector<int> producer_choices;
  size_t kept = 0, own_stride = 0;
};

void extend(const SearchProblem& problem, const LiveSets& live, size_t i, size_t state, Extension& e) {
  static const std::vector<int> no_nodes;  // live before node 0
  static const std::vector<size_t> no_strides;
  const std::vector<int>& before = i ? live.nodes[i - 1] : no_nodes;
  const std::vector<size_t>& before_strides = i ? live.strides[i - 1] : no_strides;
  // Where each input's candidate and each live output's candidate sit in the state.
  auto digit = [&](int producer) {
    const size_t pos = std::lower_bound(before.begin(), before.end(), producer) - before.begin();
    return static_cast<int>(state / before_strides[pos] % problem.nodes[producer].time.size());
  };
  const SearchNode& node = problem.nodes[i];
  e.producer_choices.resize(node.inputs.size());
  for (size_t k = 0; k < node.inputs.size(); ++k)
    e.producer_choices[k] = node.inputs[k] == SearchProblem::kInput ? 0 : digit(node.inputs[k]);
  e.kept = 0;
  for (size_t d = 0; d < live.nodes[i].size(); ++d)
    if (live.nodes[i][d] != static_cast<int>(i))
      e.kept += static_cast<size_t>(digit(live.nodes[i][d])) * live.strides[i][d];
  const bool own_digit = !live.nodes[i].empty() && live.nodes[i].back() == static_cast<int>(i);
  e.own_stride = own_digit ? live.strides[i].back() : 0;
}

/// Adds node i under candidate c, extending `e`, to (time, memory): its own cost, then its
/// input edges (add_node's order, which the brute force shares).
void add_extension(const SearchNode& node, const EdgeTables& edges, size_t i, const Extension& e, int c, double& time,
                   double& memory) {
  add_node(
      node, c, [&](size_t k) { return e.producer_choices[k]; },
      [&](size_t k, int a, int b) { return edges[i][k][a * static_cast<int>(node.time.size()) + b]; }, time, memory);
}

/// The least time that completes the nodes after i from each state after i, memory aside (the
/// same programme run backwards): rest[i][state]. Empty when the states are too many to hold,
/// and then the Pareto search bounds with per-node minimums instead.
std::vector<std::vector<double>> least_rest_time(const SearchProblem& problem, const LiveSets& live,
                                                 const EdgeTables& edges) {
  const size_t n = problem.nodes.size();
  size_t total = 0;
  for (size_t states : live.states) total += states;
  if (n == 0 || total > (size_t{1} << 24)) return {};
  std::vector<std::vector<double>> rest(n);
  rest[n - 1].assign(live.states[n - 1], 0.0);
  Extension e;
  for (size_t i = n - 1; i-- > 0;) {
    const SearchNode& next = problem.nodes[i + 1];
    rest[i].assign(live.states[i], std::numeric_limits<double>::infinity());
    for (size_t state = 0; state < live.states[i]; ++state) {
      extend(problem, live, i + 1, state, e);
      for (int c = 0; c < static_cast<int>(next.time.size()); ++c) {
        double time = 0, memory = 0;
        add_extension(next, edges, i + 1, e, c, time, memory);
        rest[i][state] = std::min(rest[i][state], time + rest[i + 1][e.kept + static_cast<size_t>(c) * e.own_stride]);
      }
    }
  }
  return rest;
}

/// A partial choice of nodes 0..i: its totals so far, the state it leaves, and how to go back.
struct Label {
  double time, memory;
  size_t state;
  size_t parent;  // index of the label of nodes 0..i-1 it extends
  int choice;     // node i's candidate
  size_t order;   // the rank of its choice vector among the labels made for node i
};

/// What the Pareto search drops: a label whose memory plus what the nodes after it add at the
/// least (edges add nothing less than 0) is over the limit, or whose time plus the least time
/// that completes it (exactly from the label's state when `rest_by_state` has it) is over the
/// time of a layout known to fit (`time_bound`), cannot complete to the answer. The slack keeps
/// a label whose bound differs from the answer only by rounding.
struct Pruning {
  double limit, time_bound;
  const std::vector<std::vector<double>>& rest_by_state;
  std::vector<double> rest_time, rest_memory;  // per node i: what the nodes from i on add at the least

  Pruning(const SearchProblem& problem, double time_bound, const std::vector<std::vector<double>>& rest_by_state)
      : limit(problem.memory_limit), time_bound(time_bound), rest_by_state(rest_by_state) {
    const size_t n = problem.nodes.size();
    rest_time.assign(n + 1, 0.0);
    rest_memory.assign(n + 1, 0.0);
    for (size_t i = n; i-- > 0;) {
      const SearchNode& node = problem.nodes[i];
      rest_time[i] = rest_time[i + 1] + *std::min_element(node.time.begin(), node.time.end());
      rest_memory[i] = rest_memory[i + 1] + *std::min_element(node.memory.begin(), node.memory.end());
    }
  }

  /// Whether `label`, a choice of nodes 0..i, cannot complete to the answer.
  bool drops(const Label& label, size_t i) const {
    const double slack = 1 + 1e-9;
    const double least_rest = rest_by_state.empty() ? rest_time[i + 1] : rest_by_state[i][label.state];
    return label.memory > limit || label.memory + rest_memory[i + 1] > limit * slack ||
           label.time + least_rest > time_bound * slack;
  }
};

/// Adds `label` to its state's Pareto front `bucket`: time ascending, memory strictly
/// descending. The label is dominated (or equalled by an earlier, lexicographically smaller
/// choice) when the last label no slower than it holds no more memory; otherwise it replaces
/// the labels from its time on that hold at least as much, which are consecutive. Binary search
/// keeps this logarithmic where fronts grow long (long chains under a memory limit).
void add_to_front(std::vector<Label>& bucket, const Label& label) {
  const auto faster =
      std::upper_bound(bucket.begin(), bucket.end(), label.time, [](double t, const Label& o) { return t < o.time; });
  if (faster != bucket.begin() && std::prev(faster)->memory <= label.memory) return;
  auto first =
      std::lower_bound(bucket.begin(), bucket.end(), label.time, [](const Label& o, double t) { return o.time < t; });
  auto last = first;
  while (last != bucket.end() && last->memory >= label.memory) ++last;
  if (first != last) {
    *first = label;
    bucket.erase(std::next(first), last);
  } else {
    bucket.insert(first, label);
  }
}

/// Keeps the better under `objective` of `label` and its state's one label (the earlier on a tie).
void add_best(std::vector<Label>& bucket, const Label& label, const Objective& objective) {
  if (bucket.empty())
    bucket.push_back(label);
  else if (better(objective, label.time, label.memory, bucket[0].time, bucket[0].memory))
    bucket[0] = label;
}

/// The best under `objective` of `final_labels`, those left after the last node (one state,
/// in lexicographic order), with its choices traced back through each node's labels.
void trace_back(const std::vector<Label>& final_labels, const std::vector<std::vector<Label>>& layers,
                const Objective& objective, SearchResult& result) {
  size_t best = 0;
  for (size_t l = 1; l < final_labels.size(); ++l)
    if (better(objective, final_labels[l].time, final_labels[l].memory, final_labels[best].time,
               final_labels[best].memory))
      best = l;
  result.time = final_labels[best].time;
  result.memory = final_labels[best].memory;
  result.choice.assign(layers.size(), 0);
  for (size_t i = layers.size(); i-- > 0;) {
    result.choice[i] = layers[i][best].choice;
    best = layers[i][best].parent;
  }
}

/// The dynamic programme. pareto: keep every (time, memory) trade-off per state and drop
/// labels that cannot complete to the answer (Pruning); else one label per state, the best
/// under `objective`. Labels of each node are kept in lexicographic order of their choices
/// (they are made by extending the previous node's labels in that order, candidates
/// ascending), so on a tie the one made first, whose choices are lexicographically smaller,
/// stays. Two labels in the same state have the same completions at the same costs, so this
/// is the tie-break of the whole choice. (With costs that are not exact in binary, two partial
/// sums that differ may round to the same total later; the tie-break then follows the partial
/// sums, not the totals.) Returns false when every label went over the limit.
bool run_search(const SearchProblem& problem, const LiveSets& live, const EdgeTables& edges, bool pareto,
                const Objective& objective, SearchResult& result,
                double time_bound = std::numeric_limits<double>::infinity(),
                const std::vector<std::vector<double>>& rest_by_state = {}) {
  const size_t n = problem.nodes.size();
  const Pruning pruning(problem, time_bound, rest_by_state);
  std::vector<Label> current{{0.0, problem.base_memory, 0, 0, 0, 0}};
  if (pareto && problem.base_memory > pruning.limit) return false;
  std::vector<std::vector<Label>> layers(n);  // kept for the way back
  std::vector<std::vector<Label>> buckets;
  Extension e;
  for (size_t i = 0; i < n; ++i) {
    const SearchNode& node = problem.nodes[i];
    buckets.assign(live.states[i], {});
    size_t order = 0;
    for (size_t l = 0; l < current.size(); ++l) {
      extend(problem, live, i, current[l].state, e);
      for (int c = 0; c < static_cast<int>(node.time.size()); ++c) {
        Label label{current[l].time, current[l].memory, e.kept + static_cast<size_t>(c) * e.own_stride, l, c, order++};
        add_extension(node, edges, i, e, c, label.time, label.memory);
        if (!pareto)
          add_best(buckets[label.state], label, objective);
        else if (!pruning.drops(label, i))
          add_to_front(buckets[label.state], label);
      }
    }
    std::vector<Label>& next = layers[i];
    for (const std::vector<Label>& bucket : buckets) next.insert(next.end(), bucket.begin(), bucket.end());
    std::sort(next.begin(), next.end(), [](const Label& a, const Label& b) { return a.order < b.order; });
    if (next.empty()) return false;
    current = next;
  }
  // Every output has been read: one state, whose labels are in lexicographic order.
  trace_back(current, layers, objective, result);
  return true;
}

}  // namespace

SearchResult search_layout(const SearchProblem& problem) {
  validate(problem);
  const LiveSets live = live_sets(problem);
  const EdgeTables edges = edge_tables(problem);
  SearchResult result;
  if (problem.memory_limit == std::numeric_limits<double>::infinity()) {
    // No limit: a label that is faster in a state stays faster whatever follows, so one per state.
    run_search(problem, live, edges, false, {Objective::time}, result);
    result.feasible = result.memory <= problem.memory_limit;
    return result;
  }
  // The smallest layout first (one label per state): if it does not fit, nothing does, and if
  // it does, its time bounds the fastest that fits, which prunes the Pareto search.
  run_search(problem, live, edges, false, {Objective::memory}, result);
  result.feasible = result.memory <= problem.memory_limit;
  if (!result.feasible) return result;
  double time_bound = result.time;
  // A tighter bound: layouts that trade time for memory at a price lambda, around the slope
  // between the fastest layout and the smallest, each a one-label-per-state search. The
  // fastest of them that fits bounds the answer; the Pareto search then finds it exactly.
  SearchResult fastest, weighed;
  run_search(problem, live, edges, false, {Objective::time}, fastest);
  if (fastest.memory <= problem.memory_limit) return {true, fastest.choice, fastest.time, fastest.memory};
  const double slope = (result.time - fastest.time) / (fastest.memory - result.memory);
  if (slope > 0 && std::isfinite(slope))
    for (double scale = 1.0 / 16; scale <= 16; scale *= 4) {
      run_search(problem, live, edges, false, {Objective::weighted, slope * scale}, weighed);
      if (weighed.memory <= problem.memory_limit) time_bound = std::min(time_bound, weighed.time);
    }
  run_search(problem, live, edges, true, {Objective::time}, result, time_bound, least_rest_time(problem, live, edges));
  return result;
}

SearchResult search_layout_brute_force(const SearchProblem& problem) {
  validate(problem);
  const size_t n = problem.nodes.size();
  double combinations = 1;
  for (const SearchNode& node : problem.nodes) combinations *= static_cast<double>(node.time.size());
  if (combinations > kMaxCombinations)
    throw Error("layout search: " + std::to_string(combinations) + " choices are too many to try them all (at most " +
                std::to_string(kMaxCombinations) + ")");
  SearchResult fastest, smallest;
  bool any_fits = false, any = false;
  std::vector<int> choice(n, 0);
  for (;;) {
    double time = 0, memory = problem.base_memory;
    for (size_t i = 0; i < n; ++i) {
      const SearchNode& node = problem.nodes[i];
      add_node(
          node, choice[i],
          [&](size_t k) { return node.inputs[k] == SearchProblem::kInput ? 0 : choice[node.inputs[k]]; },
          [&](size_t k, int a, int b) { return edge_cost(problem, node.inputs[k], i, a, b); }, time, memory);
    }
    // Choices come in lexicographic order, so on a tie the one found first stays.
    if (memory <= problem.memory_limit &&
        (!any_fits || better({Objective::time}, time, memory, fastest.time, fastest.memory))) {
      fastest = {true, choice, time, memory};
      any_fits = true;
    }
    if (!any || better({Objective::memory}, time, memory, smallest.time, smallest.memory))
      smallest = {false, choice, time, memory};
    any = true;
    size_t i = n;
    while (i > 0 && ++choice[i - 1] == static_cast<int>(problem.nodes[i - 1].time.size())) choice[--i] = 0;
    if (i == 0) break;
  }
  return any_fits ? fastest : smallest;
}

}  // namespace tessera::plan
