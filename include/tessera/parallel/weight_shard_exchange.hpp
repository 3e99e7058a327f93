#pragma once
#include <memory>
#include <string>

#include "tessera/core/tensor.hpp"
#include "tessera/parallel/collectives.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::parallel {

/// The two collectives of a weight block sharded over the ranks that would each hold a copy
/// of it (its replicas; layers::ShardedWeight): the R replicas hold consecutive runs of the
/// block's row-major elements, runs that differ by at most one element (even_boundary).
///  - gather: every replica receives the whole block from the runs (an all-gather);
///  - reduce_scatter: the replicas' gradients of the whole block are summed and each keeps its
///    run of the sum (a reduce-scatter).
/// Together they move what an all-reduce of the block's gradient moves (2(R − 1)/R of it), so
/// sharding costs no bytes over keeping copies; it costs the gather's latency before forward.
/// Runs go through MPI in rooms of the longest run (collectives of equal counts); where R
/// divides the block and MPI reads the tensors, the block itself is the buffer. Weights and
/// their gradients are fp32 in every precision, so the exchanges are. Buffers are allocated at
/// construction: a step allocates nothing. The messages go through the group's Collectives
/// (MpiCollectives).
class WeightShardExchange {
 public:
  WeightShardExchange() = default;
  /// Over `replicas` for a block of shape `block`; a shard is [its run's elements]. Throws
  /// ShapeError naming `where` when the block has fewer elements than there are replicas.
  WeightShardExchange(const Communicator& replicas, const Shape& block, const std::string& where);

  const Shape& block_shape() const { return block_; }
  const Shape& shard_shape() const { return shard_; }
  bool active() const { return parts() > 1; }
  /// block ← the replicas' runs in order.
  void gather(const Tensor& shard, const Tensor& block);
  /// shard ← this replica's run of Σ over the replicas of `block` (`block` is left unchanged).
  void reduce_scatter(const Tensor& block, const Tensor& shard);

 private:
  int parts() const { return collectives_ ? collectives_->size() : 1; }
  /// Replica r's run of the block's elements: [first, first + count).
  int64_t run_first(int r) const;
  int64_t run_count(int r) const;
  void require(const Tensor& t, const Shape& expected, const char* what) const;
  std::shared_ptr<Collectives> collectives_;  // over the replicas; shared by copies
  Shape block_, shard_;
  std::string where_;
  int64_t room_ = 0;               // elements of the longest run
  bool direct_ = true;             // R divides the block and MPI reads the tensors: no buffers
  DeviceView<float> buffer_;       // [R][room]: the padded runs
  DeviceView<float> send_, sums_;  // [room]: this replica's padded run; its run of the sums
  // When MPI cannot read device memory: the runs, this replica's run and its sums on the host.
  DeviceView<float>::HostMirror host_, host_send_, host_sums_;
};

}  // namespace tessera::parallel
