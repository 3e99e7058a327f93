#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/segment_chunks.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::parallel {

/// The weights of Adasum's pairwise rule adasum(a, b) = wa·a + wb·b, with
/// wa = 1 − a·b / (2‖a‖²) and wb = 1 − a·b / (2‖b‖²). A zero vector gets weight 1 (it
/// contributes nothing, so the result is the other vector: a plain sum).
struct AdasumWeights {
  double a = 1.0, b = 1.0;
};
AdasumWeights adasum_weights(double dot, double norm_a_squared, double norm_b_squared);

/// Adasum (Maleki et al., "Scaling Distributed Training with Adaptive Summation", the rule of
/// Horovod's op=Adasum): combines gradient vectors so that parallel components are averaged
/// and orthogonal ones summed. The rule is applied to each segment of a flat buffer (each
/// parameter tensor) on its own; dot products and norms are accumulated in double over
/// fixed-size chunks in a fixed order, so the result does not depend on the thread count.
class Adasum {
 public:
  /// `segment_offsets` holds 0, the start of every further segment and the buffer's size, in
  /// increasing order. Throws ConfigError naming `where` unless the group's size is a power
  /// of two (ranks are combined in pairs).
  Adasum(Communicator group, std::vector<int64_t> segment_offsets, const std::string& where);

  /// out = adasum(a, b), segment by segment; local, no communication. `out` may be `a` or `b`.
  void combine(const Tensor& a, const Tensor& b, const Tensor& out);
  /// Replaces `data` on every rank of the group with the Adasum of all ranks' `data`, by
  /// recursive doubling: in round k each rank swaps its partial result with rank ^ 2^k and
  /// both compute adasum(lower rank's, higher rank's), so every rank ends with the same bits.
  /// Collective over the group; blocking.
  void allreduce(const Tensor& data);

  const Communicator& group() const { return group_; }
  /// The number of elements of the buffers this combines.
  int64_t size() const { return chunks_.size(); }

 private:
  void exchange(const Tensor& data, int partner);
  Communicator group_;
  SegmentChunks chunks_;  // one segment per parameter tensor
  Matrix<double> weights_;  // per segment: wa, wb
  Matrix<double>::HostMirror host_weights_;
  Tensor partner_;                                         // the partner's partial result
  Kokkos::View<float*, HostSpace> send_host_, recv_host_;  // staging without host access
};

}  // namespace tessera::parallel
