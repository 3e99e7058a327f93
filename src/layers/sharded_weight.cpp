#include "tessera/layers/sharded_weight.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/core/even_split.hpp"

namespace tessera::layers {

ParameterShard ShardedWeight::shard(const parallel::ProcessGrid& grid, const ParameterShard& block,
                                    const std::string& where) {
  const int replicas = grid.replicas().size(), parts = grid.channel_parts();
  if (!grid.distribution().shard_weights || replicas == 1) return block;
  ParameterShard s = block;
  s.held.clear();
  // Member m of grid.all() holds channel block m % parts (ProcessGrid numbers channels fastest)
  // and is replica m / parts of it (replicas() orders them by rank). Runs of the block's
  // row-major elements are contiguous in the block as the layer stores it: the exchanges move
  // them without packing.
  for (int m = 0; m < grid.all().size(); ++m) {
    const int c = m % parts, r = m / parts;
    if (block.split()) s.held.push_back(block.held.at(static_cast<size_t>(c)));
    const int64_t elements = block.member_shape(block.split() ? c : 0, where).numel();
    if (elements < replicas)
      throw ShapeError(where + ": its weight block of " + std::to_string(elements) + " elements (of " +
                       block.whole.str() + ") cannot shard over its " + std::to_string(replicas) +
                       " replicas, each needs at least one (distribution " + grid.distribution().str() +
                       "): keep this layer's weights replicated");
    s.run_first.push_back(even_boundary(elements, replicas, r));
    s.run_count.push_back(even_part(elements, replicas, r));
  }
  s.index = grid.all().rank();
  s.group = grid.all();
  s.replicas = parallel::Communicator::self();
  return s;
}

void ShardedWeight::reshape(const parallel::ProcessGrid& grid, Parameter* weight, const std::string& where) {
  weight_ = weight;
  if (!grid.distribution().shard_weights || grid.replicas().is_serial() || active()) return;
  const Shape block = weight->shard.member_block_shape(weight->shard.index, where);
  exchange_ = parallel::WeightShardExchange(grid.replicas(), block, where);
  block_ = Tensor(block, ElementType::fp32, "tessera::weight_block");
}

const Tensor& ShardedWeight::gather() {
  if (!active()) return weight_->value;
  exchange_.gather(weight_->value, block_);
  return block_;
}

void ShardedWeight::finish_grad() {
  if (active()) exchange_.reduce_scatter(block_, weight_->grad);
}

}  // namespace tessera::layers
