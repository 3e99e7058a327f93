#include "tessera/model/spatial_split_alignment.hpp"

#include <map>
#include <numeric>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::model {
namespace {

/// A positive rational p/q in lowest terms: an extent's alignment relative to its chain's first.
struct Ratio {
  int64_t p = 1, q = 1;
  Ratio times(int64_t num, int64_t den) const {
    const int64_t a = p * num, b = q * den, g = std::gcd(a, b);
    return {a / g, b / g};
  }
  bool operator==(const Ratio& o) const { return p == o.p && q == o.q; }
};

/// One layer's tie of two extents along an axis: alignment(read) = stride · alignment(written).
struct Tie {
  int64_t read = 0, written = 0, stride = 1;
  size_t node = 0;
};

/// The ties of `axis` from the graph's layers that split it.
std::vector<Tie> ties_of(const Graph& g, size_t axis) {
  std::vector<Tie> ties;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    if (n.grid().spatial_parts()[axis] == 1 || n.inputs.empty()) continue;
    const Shape in = g.global_input(i, 0, 1), out = n.global_output;
    if (in.rank() < 4 || out.rank() < 4) continue;
    const auto window = n.layer->window(in);
    if (!window) continue;
    const int64_t a = parallel::spatial_size_of(window->on_output ? out : in)[axis];
    const int64_t b = parallel::spatial_size_of(window->on_output ? in : out)[axis];
    const int64_t s = window->window.stride[axis];
    if (s != 1 || a != b) ties.push_back({a, b, s, i});
  }
  return ties;
}

/// Alignments relative to each chain's first extent, by walking the ties from it: one map per
/// chain.
std::vector<std::map<int64_t, Ratio>> relative_alignments(const Graph& g, const std::vector<Tie>& ties, size_t axis) {
  std::map<int64_t, std::vector<std::pair<int64_t, Ratio>>> next;  // extent → (extent, its ratio to this)
  std::map<int64_t, size_t> node_of;
  for (const Tie& t : ties) {
    next[t.read].push_back({t.written, Ratio{1, t.stride}});
    next[t.written].push_back({t.read, Ratio{t.stride, 1}});
    node_of[t.read] = node_of[t.written] = t.node;
  }
  std::map<int64_t, Ratio> ratio;
  std::vector<std::map<int64_t, Ratio>> chains;
  for (const auto& [start, unused] : next) {
    if (ratio.count(start)) continue;
    ratio[start] = Ratio{};
    chains.emplace_back();
    chains.back()[start] = Ratio{};
    std::vector<int64_t> todo{start};
    while (!todo.empty()) {
      const int64_t e = todo.back();
      todo.pop_back();
      for (const auto& [other, r] : next[e]) {
        const Ratio want = ratio[e].times(r.p, r.q);
        if (auto it = ratio.find(other); it != ratio.end()) {
          if (!(it->second == want)) {
            const GraphNode& n = g.nodes[node_of[other]];
            static const char* const names[3] = {"depth", "height", "width"};
            throw ConfigError(n.spec_path, "layer '" + n.layer->name() + "' (" + n.layer->type() + "): the " +
                                               names[axis] + " extents " + std::to_string(e) + " and " +
                                               std::to_string(other) +
                                               " are tied by different strides by the layers split over " +
                                               names[axis] + ", so no cut of them lines up through all of them; " +
                                               "split " + names[axis] + " over fewer of those layers");
          }
          continue;
        }
        ratio[other] = chains.back()[other] = want;
        todo.push_back(other);
      }
    }
  }
  return chains;
}

}  // namespace

void align_spatial_splits(Graph& graph) {
  parallel::SpatialAlignment& alignment = *graph.alignment;
  for (size_t axis = 0; axis < 3; ++axis) {
    for (const auto& chain : relative_alignments(graph, ties_of(graph, axis), axis)) {
      // Whole numbers, the smallest 1: scale by the denominators' lcm, then by the gcd.
      int64_t lcm = 1;
      for (const auto& [extent, r] : chain) lcm = std::lcm(lcm, r.q);
      int64_t gcd = 0;
      for (const auto& [extent, r] : chain) gcd = std::gcd(gcd, r.p * (lcm / r.q));
      for (const auto& [extent, r] : chain) alignment.set(axis, extent, r.p * (lcm / r.q) / gcd);
    }
  }
}

}  // namespace tessera::model
