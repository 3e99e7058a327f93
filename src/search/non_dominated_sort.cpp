#include "tessera/search/non_dominated_sort.hpp"

#include <string>

#include "tessera/core/error.hpp"

namespace tessera::search {

bool dominates(const Objectives& a, const Objectives& b) {
  bool better = false;
  for (size_t m = 0; m < a.size(); ++m) {
    if (a[m] > b[m]) return false;
    if (a[m] < b[m]) better = true;
  }
  return better;
}

std::vector<std::vector<size_t>> non_dominated_sort(const std::vector<Objectives>& points) {
  const size_t n = points.size();
  if (n == 0) return {};
  const size_t objectives = points[0].size();
  if (objectives == 0) throw Error("non-dominated sort: a point has no objectives");
  for (size_t i = 1; i < n; ++i)
    if (points[i].size() != objectives)
      throw Error("non-dominated sort: point " + std::to_string(i) + " has " + std::to_string(points[i].size()) +
                  " objectives, point 0 has " + std::to_string(objectives));
  std::vector<std::vector<size_t>> dominated(n);  // whom each point dominates
  std::vector<size_t> dominators(n, 0);           // how many points dominate each
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      if (dominates(points[i], points[j])) {
        dominated[i].push_back(j);
        ++dominators[j];
      } else if (dominates(points[j], points[i])) {
        dominated[j].push_back(i);
        ++dominators[i];
      }
    }
  std::vector<std::vector<size_t>> fronts;
  std::vector<size_t> current;
  for (size_t i = 0; i < n; ++i)
    if (dominators[i] == 0) current.push_back(i);
  std::vector<char> placed(n, 0);
  while (!current.empty()) {
    std::vector<size_t> next;
    for (const size_t i : current)
      for (const size_t j : dominated[i])
        if (--dominators[j] == 0) next.push_back(j);
    fronts.push_back(current);
    // Ascending order within a front keeps every later tie-break independent of the sort's
    // visiting order.
    std::vector<char> in_next(n, 0);
    for (const size_t j : next) in_next[j] = 1;
    current.clear();
    for (size_t j = 0; j < n; ++j)
      if (in_next[j]) current.push_back(j);
  }
  return fronts;
}

}  // namespace tessera::search
