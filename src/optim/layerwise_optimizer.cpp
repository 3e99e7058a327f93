#include "tessera/optim/layerwise_optimizer.hpp"

#include "tessera/core/error.hpp"

namespace tessera::optim {

void LayerwiseOptimizer::set_tensors(const ParameterTensors& tensors) {
  tensors_ = tensors;
  told_ = true;
  prepared_ = false;
}

int64_t LayerwiseOptimizer::bind_buffers(const std::string& optimizer, const Tensor& values, const Tensor& grads) {
  numel_ = detail::check_bind(optimizer, values, grads);
  values_ = values;
  grads_ = grads;
  bound_ = true;
  prepared_ = false;
  return numel_;
}

void LayerwiseOptimizer::prepare(const std::string& optimizer) {
  if (prepared_) return;
  if (!told_) tensors_ = ParameterTensors::single(numel_);
  tensors_.check_tiles(numel_, optimizer);
  chunks_ = SegmentChunks(tensors_.offsets(), optimizer);
  factors_ = Matrix<double>("tessera::layerwise_factors", tensors_.tensors.size(), 2);
  host_factors_ = Kokkos::create_mirror_view(factors_);
  prepared_ = true;
}

void LayerwiseOptimizer::upload_factors(const std::vector<std::array<double, 2>>& per_tensor) {
  prepare(type());
  for (size_t t = 0; t < per_tensor.size(); ++t) {
    host_factors_(t, 0) = per_tensor[t][0];
    host_factors_(t, 1) = per_tensor[t][1];
  }
  Kokkos::deep_copy(factors_, host_factors_);
}

}  // namespace tessera::optim
