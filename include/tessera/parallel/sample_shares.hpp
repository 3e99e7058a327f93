#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::parallel {

/// How the samples of a global batch are shared among the ranks of a model's group: in
/// proportion to one weight per rank, equal unless a run balances them ("balance" in the
/// training section). Every ProcessGrid of a model holds the same SampleShares, so one change
/// of weights moves every layer's sample blocks at once.
///
/// A grid of S sample groups (each K = ranks / S consecutive ranks) gives group g the rows
/// [boundary(batch, g·K), boundary(batch, (g+1)·K)), where boundary(batch, r) rounds
/// batch · W(r) / W half up, W(r) being the weight of ranks [0, r) and W the total. Rounding the
/// cumulative weight, rather than each share, gives:
///  - equal weights: shares that differ by at most one sample (7 over 4 groups: 2, 2, 1, 2);
///  - nesting: the boundaries of S groups are among those of S·m groups, so a coarser grid's
///    block is a union of finer grids' blocks on the same ranks. The trainer's targets and a
///    redistribution between sample counts never need rows from a rank outside the block.
/// Integer arithmetic: every rank computes the same boundaries.
class SampleShares {
 public:
  /// Equal weights for `ranks` ranks.
  explicit SampleShares(int ranks = 1);
  /// Shares by `weights`, one per rank (each at least 1).
  static SampleShares of_weights(const std::vector<int64_t>& weights);

  int ranks() const { return static_cast<int>(weights_.size()); }
  const std::vector<int64_t>& weights() const { return weights_; }
  /// Whether all weights are equal.
  bool even() const;
  /// Replaces the weights, one per rank, each at least 1. Throws Error naming `where` otherwise.
  void set_weights(std::vector<int64_t> weights, const std::string& where);
  /// Rows of a batch of `batch` samples that ranks [0, rank) take.
  int64_t boundary(int64_t batch, int rank) const;
  /// The rows each of `groups` sample groups takes of a batch (groups divides ranks()).
  std::vector<int64_t> rows(int64_t batch, int groups) const;
  /// Counts the changes of weights: a plan made for one version is stale for another.
  uint64_t version() const { return version_; }

 private:
  std::vector<int64_t> weights_, cumulative_;  // cumulative_[r]: the weight of ranks [0, r)
  uint64_t version_ = 0;
};

/// Shares as logs and headers write them: "4/3/4".
std::string shares_text(const std::vector<int64_t>& rows);

/// Integer weights (summing to about 10⁶, each at least 1) in proportion to `speeds` (samples
/// per second per rank, each > 0).
std::vector<int64_t> weights_of_speeds(const std::vector<double>& speeds);

}  // namespace tessera::parallel
