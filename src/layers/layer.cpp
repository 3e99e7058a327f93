#include "tessera/layers/layer.hpp"

namespace tessera::layers {

void Layer::setup(const std::vector<Shape>& inputs, const LayerContext& ctx, ParameterRegistry& params) {
  declare(inputs, ctx, params);
  reshape(inputs);
}

void Layer::declare(const std::vector<Shape>& inputs, const LayerContext& ctx, ParameterRegistry& params) {
  ctx_ = ctx;
  declare_parameters(inputs, params);
}

void Layer::reshape(const std::vector<Shape>& /*inputs*/) {}

Shape Layer::global_shape(const Shape& local) const {
  const int64_t batch = batch_ > 0 || local.rank() == 0 ? batch_ : local[0] * ctx_.grid.distribution().sample;
  return ctx_.grid.global_shape(local, batch);
}

}  // namespace tessera::layers
