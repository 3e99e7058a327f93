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

int64_t Layer::batch() const {
  return global_inputs_.empty() || global_inputs_[0].rank() == 0 ? 0 : global_inputs_[0][0];
}

Shape Layer::global_shape(const Shape& local) const {
  if (!global_inputs_.empty() && global_inputs_[0].rank() == local.rank()) return global_inputs_[0];
  if (local.rank() == 0) return local;
  return ctx_.grid.global_shape(local, local[0] * ctx_.grid.distribution().sample);
}

Shape Layer::whole_channels(const Shape& local, size_t input) const {
  Shape whole = local;
  if (whole.rank() == 0) return whole;
  const bool given = input < global_inputs_.size() && global_inputs_[input].rank() == local.rank();
  whole[whole.rank() - 1] = given ? global_inputs_[input][local.rank() - 1]
                                  : local[local.rank() - 1] * ctx_.grid.distribution().channel_parts();
  return whole;
}

}  // namespace tessera::layers
