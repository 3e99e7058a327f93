#include "tessera/search/crowding_distance.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace tessera::search {

std::vector<double> crowding_distance(const std::vector<Objectives>& points, const std::vector<size_t>& front) {
  const size_t n = front.size();
  std::vector<double> distance(n, 0.0);
  if (n == 0) return distance;
  const double inf = std::numeric_limits<double>::infinity();
  if (n <= 2) return std::vector<double>(n, inf);
  std::vector<size_t> order(n);
  for (size_t m = 0; m < points[front[0]].size(); ++m) {
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const double fa = points[front[a]][m], fb = points[front[b]][m];
      return fa != fb ? fa < fb : front[a] < front[b];
    });
    distance[order.front()] = inf;
    distance[order.back()] = inf;
    const double range = points[front[order.back()]][m] - points[front[order.front()]][m];
    if (!(range > 0.0)) continue;
    for (size_t k = 1; k + 1 < n; ++k)
      distance[order[k]] += (points[front[order[k + 1]]][m] - points[front[order[k - 1]]][m]) / range;
  }
  return distance;
}

}  // namespace tessera::search
