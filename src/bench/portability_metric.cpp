#include "tessera/bench/portability_metric.hpp"

#include <cmath>

#include "tessera/core/error.hpp"

namespace tessera::bench {

double performance_portability(const std::vector<std::optional<double>>& efficiencies) {
  if (efficiencies.empty()) return 0.0;
  double inverse_sum = 0.0;
  for (const auto& e : efficiencies) {
    if (!e || *e <= 0.0) return 0.0;
    if (!std::isfinite(*e)) throw Error("performance portability: an efficiency is not finite");
    inverse_sum += 1.0 / *e;
  }
  return static_cast<double>(efficiencies.size()) / inverse_sum;
}

}  // namespace tessera::bench
