#include "tessera/core/statistics.hpp"

#include <algorithm>

namespace tessera {

double median(std::vector<double> values) {
  const size_t n = values.size();
  if (n == 0) return 0.0;
  std::sort(values.begin(), values.end());
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace tessera
