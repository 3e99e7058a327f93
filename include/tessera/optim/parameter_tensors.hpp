#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera::optim {

/// One parameter tensor inside the flat parameter buffer, as a layer-wise optimizer sees it.
struct ParameterTensor {
  int64_t offset = 0, numel = 0;  // this rank's elements: [offset, offset + numel)
  /// One-dimensional in the whole model (a bias, a normalisation layer's scale or shift): the
  /// tensors LARS and LAMB leave out of the trust ratio and the weight decay by default.
  bool vector = false;
};

/// Where each parameter tensor lies in the flat buffers an optimizer is bound to, so that
/// layer-wise methods (LARS, LAMB) can take a trust ratio per tensor. Elementwise optimizers
/// (SGD, Adam) ignore it.
struct ParameterTensors {
  std::vector<ParameterTensor> tensors;
  /// Under model parallelism a rank holds a shard of some tensors, and a norm must be the
  /// whole tensor's: this completes this rank's per-tensor partial sums (`per_tensor` sums
  /// per tensor, tensor after tensor) into the whole tensors' sums, a collective over the
  /// ranks that share each split tensor. Empty when no tensor is split.
  std::function<void(std::vector<double>& sums, int per_tensor)> complete_sums;

  /// The whole buffer of `numel` elements as one tensor (what a layer-wise optimizer assumes
  /// when it was never told the layout).
  static ParameterTensors single(int64_t numel);
  /// Offsets for SegmentChunks: 0, each further tensor's start, the total.
  std::vector<int64_t> offsets() const;
  /// Throws Error naming `optimizer` unless the tensors tile [0, numel) in order.
  void check_tiles(int64_t numel, const std::string& optimizer) const;
};

}  // namespace tessera::optim
