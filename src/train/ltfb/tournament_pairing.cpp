#include "tessera/train/ltfb/tournament_pairing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::train {

std::vector<std::pair<int64_t, int64_t>> tournament_pairs(uint64_t seed, int64_t round, int64_t trainers) {
  if (trainers < 1) throw Error("tournament pairs: a population needs at least one trainer");
  std::vector<int64_t> order(static_cast<size_t>(trainers));
  std::iota(order.begin(), order.end(), 0);
  const uint64_t stream = 0x6c7466622d706169ull ^ static_cast<uint64_t>(round);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng::bits(seed, stream, i) % i]);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i + 1 < order.size(); i += 2)
    pairs.emplace_back(std::min(order[i], order[i + 1]), std::max(order[i], order[i + 1]));
  return pairs;
}

bool better_metric(double a, double b, bool higher_is_better) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return higher_is_better ? a > b : a < b;
}

std::vector<std::pair<int64_t, int64_t>> truncation_pairs(const std::vector<double>& metrics, int64_t count,
                                                          bool higher_is_better) {
  const auto n = static_cast<int64_t>(metrics.size());
  if (count < 0 || 2 * count > n)
    throw Error("truncation selection: " + std::to_string(count) + " worst cannot copy as many best of " +
                std::to_string(n) + " trainers");
  std::vector<int64_t> ranked(static_cast<size_t>(n));
  std::iota(ranked.begin(), ranked.end(), 0);
  std::stable_sort(ranked.begin(), ranked.end(), [&](int64_t a, int64_t b) {
    return better_metric(metrics[static_cast<size_t>(a)], metrics[static_cast<size_t>(b)], higher_is_better);
  });
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t i = 0; i < count; ++i)
    pairs.emplace_back(ranked[static_cast<size_t>(i)], ranked[static_cast<size_t>(n - 1 - i)]);
  return pairs;
}

}  // namespace tessera::train
