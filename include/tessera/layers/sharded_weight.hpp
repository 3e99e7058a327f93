#pragma once
#include <string>

#include "tessera/core/tensor.hpp"
#include "tessera/layers/parameter.hpp"
#include "tessera/parallel/process_grid.hpp"
#include "tessera/parallel/weight_shard_exchange.hpp"

namespace tessera::layers {

/// A layer's weight that its replicas (the ranks of the sample and spatial axes, which hold
/// copies of the same block under a channel split: ProcessGrid::replicas) split among
/// themselves when the layer's distribution says "weights": "sharded". Each replica keeps a
/// run of the block's elements, with its gradient and optimizer state; forward gathers
/// the block from the runs and keeps it for backward, and backward reduce-scatters the block's
/// gradient, each replica keeping the sum over the replicas of its run. That sum is what the
/// gradient all-reduce of a replicated weight computes, so the trainer does not reduce a
/// sharded weight again (its shard's `replicas` are this rank alone).
///
/// With a 2-D channel × filter grid over q × q ranks and q sample ranks this is the 3-D (cube)
/// split of Bian et al. 2021 ("cube": q): every rank holds 1/q³ of the weights, of the inputs
/// and of the outputs. Without a channel split it shards the whole weight over the samples
/// (ZeRO stage 3, Rajbhandari et al. 2020). Either way the gathered block, 1/(channel ranks)
/// of the weight, lives from forward to backward as activations do, and then holds the
/// block's gradient until it is reduce-scattered.
class ShardedWeight {
 public:
  /// The part of a weight this rank holds: `block` (its block under the channel split,
  /// ChannelSplit::weight_shard) when the weights are replicated, else its run of the block's
  /// elements over grid.replicas(), whose gradient sums over no other rank. Throws ShapeError
  /// naming `where`, the block and the ranks when the block has fewer elements than the grid
  /// has replicas.
  static ParameterShard shard(const parallel::ProcessGrid& grid, const ParameterShard& block, const std::string& where);

  /// Binds to the declared `weight` (declared with shard()) and builds the exchange.
  void reshape(const parallel::ProcessGrid& grid, Parameter* weight, const std::string& where);
  bool active() const { return exchange_.active(); }
  /// Forward: the whole block, gathered from the replicas' runs (the weight's value when not
  /// sharded).
  const Tensor& gather();
  /// Backward: the block gathered in forward.
  const Tensor& value() const { return active() ? block_ : weight_->value; }
  /// Backward: where the op writes the block's gradient: the gathered block itself, which
  /// holds one block per layer rather than two, so a layer's backward reads value() before it
  /// writes grad().
  const Tensor& grad() const { return active() ? block_ : weight_->grad; }
  /// Backward, after the op: reduce-scatters the block's gradient into the weight's.
  void finish_grad();

 private:
  Parameter* weight_ = nullptr;
  parallel::WeightShardExchange exchange_;
  Tensor block_;  // the gathered weights, then their gradient
};

}  // namespace tessera::layers
