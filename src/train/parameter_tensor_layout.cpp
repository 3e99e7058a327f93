#include "tessera/train/parameter_tensor_layout.hpp"

namespace tessera::train {

optim::ParameterTensors parameter_tensor_layout(const model::ParameterStore& parameters) {
  optim::ParameterTensors layout;
  const std::vector<int64_t> offsets = parameters.trainable_offsets();
  std::vector<const layers::Parameter*> split;  // one entry per tensor, null when whole
  for (const auto& p : parameters.all()) {
    if (!p->trainable) continue;
    const size_t k = layout.tensors.size();
    const Shape& whole = p->shard.split() ? p->shard.whole : p->shape;
    layout.tensors.push_back({offsets[k], offsets[k + 1] - offsets[k], whole.rank() <= 1});
    split.push_back(p->shard.split() ? p.get() : nullptr);
  }
  if (!parameters.has_shards()) return layout;
  layout.complete_sums = [split](std::vector<double>& sums, int per_tensor) {
    // Every rank walks the tensors in the same (graph) order, so the collectives over the
    // shard groups match up.
    for (size_t k = 0; k < split.size(); ++k)
      if (split[k] != nullptr && !split[k]->shard.group.is_serial())
        split[k]->shard.group.allreduce_sum(sums.data() + k * static_cast<size_t>(per_tensor), per_tensor);
  };
  return layout;
}

}  // namespace tessera::train
