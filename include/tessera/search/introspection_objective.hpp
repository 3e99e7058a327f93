#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/search/objective.hpp"

namespace tessera::search {

/// Disentanglement of a layer's channels: the mean absolute Pearson correlation between the
/// activation maps of every pair of its C channels. With a_c the values of channel c over all
/// positions (voxels) of all samples, pooled,
///   r_ij = cov(a_i, a_j) / sqrt(var(a_i) var(a_j)),   score = 2 / (C (C−1)) · Σ_{i<j} |r_ij|.
/// 0: channels uncorrelated (each says something the others do not); 1: every channel a
/// scaled copy of the others. A constant channel (a dead unit) has no correlation and counts
/// as |r| = 1 with every other, so switching channels off does not look disentangled. One
/// channel: 0. `values` is channels-last, `channels` values per position.
double mean_abs_channel_correlation(const std::vector<float>& values, int64_t channels);

/// The "introspection" objective: mean_abs_channel_correlation of the named layer's output on
/// the first `samples` validation samples (lower is more disentangled). Settings, the space's
/// "introspection" section: {"layer": name (required), "samples": 16}.
class IntrospectionObjective final : public Objective {
 public:
  IntrospectionObjective(const nlohmann::json& settings, const std::string& path);
  std::string name() const override { return "introspection"; }
  double measure(TrainedCandidate& candidate) override;
  const std::string& layer() const { return layer_; }

 private:
  /// The layer's output on this rank alone: a copy of the model up to the layer, on one
  /// rank, with the trained parameters.
  std::vector<float> activations(TrainedCandidate& candidate, int64_t& channels) const;

  std::string layer_;
  int64_t samples_ = 16;
};

}  // namespace tessera::search
