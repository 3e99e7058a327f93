#pragma once
#include <cstdint>
#include <vector>

namespace tessera::layers {

/// Which input hypercolumns each output hypercolumn of a BCPNN layer reads: its patchy
/// receptive field, [outputs, inputs] of 1 (connected) or 0, held on the host (it is small:
/// one entry per pair of hypercolumns). Every output hypercolumn reads the same number of
/// inputs, its fan-in, and rewiring keeps it.
///
/// Structural plasticity (Ravichandran et al., "Learning representations in Bayesian
/// Confidence Propagation neural networks", IJCNN 2020; Podobas et al., "StreamBrain", HEART
/// 2021) rewires by the mutual information I(h, g) the traces estimate between output h and
/// input g, each input's score divided by 1 + the number of other outputs that read it, so
/// that outputs spread over the inputs: per output, the unconnected input of highest score
/// replaces the connected input of lowest score while it scores strictly higher, up to a
/// number of swaps.
class ConnectionMask {
 public:
  ConnectionMask() = default;
  /// Each output reads `fan_in` distinct inputs chosen at random from (seed, stream): the
  /// inputs of the `fan_in` smallest draws rng::bits(seed, stream, h·inputs + g).
  static ConnectionMask random(int64_t outputs, int64_t inputs, int64_t fan_in, uint64_t seed, uint64_t stream);
  /// The mask of `values` ([outputs, inputs], 0 or 1); throws Error when an output's fan-in
  /// differs from the first's or a value is neither.
  static ConnectionMask of(int64_t outputs, int64_t inputs, std::vector<float> values);

  /// Up to `swaps` swaps per output hypercolumn (in order 0, 1, ...) by the rule above, on
  /// `mutual_information` [outputs, inputs]; returns the swaps made.
  int64_t rewire(const std::vector<float>& mutual_information, int64_t swaps);

  int64_t outputs() const { return outputs_; }
  int64_t inputs() const { return inputs_; }
  int64_t fan_in() const { return fan_in_; }
  bool connected(int64_t output, int64_t input) const { return values_[index(output, input)] != 0.0f; }
  const std::vector<float>& values() const { return values_; }

 private:
  size_t index(int64_t output, int64_t input) const { return static_cast<size_t>(output * inputs_ + input); }
  /// How many outputs read each input.
  std::vector<int64_t> fan_outs() const;

  int64_t outputs_ = 0, inputs_ = 0, fan_in_ = 0;
  std::vector<float> values_;
};

}  // namespace tessera::layers
