#include "tessera/layers/global_avg_pool.hpp"

#include "tessera/backends/kokkos/global_pool_kernels.hpp"
#include "tessera/core/error.hpp"

namespace tessera::layers {

std::unique_ptr<Layer> GlobalAvgPool::from_json(const std::string& name, ConfigObject& cfg, int spatial_rank) {
  if (spatial_rank != 2 && spatial_rank != 3)
    throw ConfigError(cfg.path(), "global pooling is 2D or 3D, got spatial rank " + std::to_string(spatial_rank));
  return std::make_unique<GlobalAvgPool>(name, spatial_rank);
}

Shape GlobalAvgPool::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  const Shape& s = inputs[0];
  require_shape(s.rank() == spatial_rank_ + 2, where() + ": expected an input " +
                                                   (spatial_rank_ == 2 ? "[N, H, W, C]" : "[N, D, H, W, C]") +
                                                   ", got " + s.str());
  return Shape{s[0], s[s.rank() - 1]};
}

void GlobalAvgPool::reshape(const std::vector<Shape>& inputs) {
  const Shape& local = inputs.at(0);
  output_shape(inputs);
  split_ = grid().distribution().is_spatial() && !grid().spatial().is_serial();
  const Shape whole = split_ ? global_shape(local) : local;
  int64_t positions = 1;
  for (int k = 1; k + 1 < whole.rank(); ++k) positions *= whole[k];
  scale_ = 1.0f / static_cast<float>(positions);
  if (split_) ensure_shape(grad_sum_, Shape{local[0], local[local.rank() - 1]}, "tessera::global_avg_pool_grad");
}

void GlobalAvgPool::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& /*step*/) {
  kokkos_backend::global_sum_pool_forward(inputs.at(0), scale_, output);
  if (split_) grid().spatial().allreduce_sum(output);
}

void GlobalAvgPool::backward(const std::vector<Tensor>& /*inputs*/, const Tensor& /*output*/, const Tensor& grad_output,
                             const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  const Tensor& dx = grad_inputs.at(0);
  if (dx.empty()) return;
  if (!split_) {
    kokkos_backend::global_sum_pool_backward(grad_output, scale_, dx);
    return;
  }
  // Each replica of the features holds its share of their gradient: the whole gradient, which
  // every position of the sample receives, is the group's sum.
  deep_copy(grad_sum_, grad_output);
  grid().spatial().allreduce_sum(grad_sum_);
  kokkos_backend::global_sum_pool_backward(grad_sum_, scale_, dx);
}

}  // namespace tessera::layers
