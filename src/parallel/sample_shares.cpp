#include "tessera/parallel/sample_shares.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/even_split.hpp"

namespace tessera::parallel {

SampleShares::SampleShares(int ranks) {
  if (ranks < 1) throw Error("sample shares: a group has at least one rank, got " + std::to_string(ranks));
  set_weights(std::vector<int64_t>(static_cast<size_t>(ranks), 1), "sample shares");
  version_ = 0;
}

SampleShares SampleShares::of_weights(const std::vector<int64_t>& weights) {
  SampleShares shares(static_cast<int>(weights.size()));
  shares.set_weights(weights, "sample shares");
  return shares;
}

bool SampleShares::even() const {
  return std::all_of(weights_.begin(), weights_.end(), [&](int64_t w) { return w == weights_.front(); });
}

void SampleShares::set_weights(std::vector<int64_t> weights, const std::string& where) {
  if (!weights_.empty() && weights.size() != weights_.size())
    throw Error(where + ": " + std::to_string(weights.size()) + " weights for " + std::to_string(weights_.size()) +
                " ranks; give one per rank");
  int64_t total = 0;
  for (size_t r = 0; r < weights.size(); ++r) {
    if (weights[r] < 1)
      throw Error(where + ": the weight of rank " + std::to_string(r) + " is " + std::to_string(weights[r]) +
                  "; weights must be positive");
    if (__builtin_add_overflow(total, weights[r], &total))
      throw Error(where + ": the weights add up to more than a 64-bit count holds");
  }
  weights_ = std::move(weights);
  cumulative_.assign(weights_.size() + 1, 0);
  for (size_t r = 0; r < weights_.size(); ++r) cumulative_[r + 1] = cumulative_[r] + weights_[r];
  ++version_;
}

int64_t SampleShares::boundary(int64_t batch, int rank) const {
  const auto r = static_cast<size_t>(std::clamp(rank, 0, ranks()));
  // round(batch · W(r) / W), halves up: the rule of equal parts, with weights as the units.
  return even_boundary(batch, cumulative_.back(), cumulative_[r]);
}

std::vector<int64_t> SampleShares::rows(int64_t batch, int groups) const {
  if (groups < 1 || ranks() % groups != 0)
    throw Error("sample shares: " + std::to_string(groups) + " sample groups do not divide " + std::to_string(ranks()) +
                " ranks");
  const int per_group = ranks() / groups;
  std::vector<int64_t> rows(static_cast<size_t>(groups));
  for (int g = 0; g < groups; ++g)
    rows[static_cast<size_t>(g)] = boundary(batch, (g + 1) * per_group) - boundary(batch, g * per_group);
  return rows;
}

std::string shares_text(const std::vector<int64_t>& rows) {
  std::string text;
  for (int64_t r : rows) text += (text.empty() ? "" : "/") + std::to_string(r);
  return text;
}

std::vector<int64_t> weights_of_speeds(const std::vector<double>& speeds) {
  double total = 0.0;
  for (double s : speeds) {
    if (!(s > 0.0) || !std::isfinite(s)) throw Error("sample shares: a rank's speed must be positive and finite");
    total += s;
  }
  std::vector<int64_t> weights;
  for (double s : speeds) weights.push_back(std::max<int64_t>(1, std::llround(s / total * 1e6)));
  return weights;
}

}  // namespace tessera::parallel
