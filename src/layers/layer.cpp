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

const Shape* Layer::given_input(size_t input, const Shape& local) const {
  return input < global_inputs_.size() && global_inputs_[input].rank() == local.rank() ? &global_inputs_[input]
                                                                                       : nullptr;
}

Shape Layer::global_shape(const Shape& local) const {
  if (const Shape* given = given_input(0, local)) return *given;
  if (local.rank() == 0) return local;
  return ctx_.grid.global_shape(local, local[0] * ctx_.grid.distribution().sample);
}

Shape Layer::whole_channels(const Shape& local, size_t input) const {
  Shape whole = local;
  if (whole.rank() == 0) return whole;
  const Shape* given = given_input(input, local);
  whole[whole.rank() - 1] =
      given ? (*given)[local.rank() - 1] : local[local.rank() - 1] * ctx_.grid.distribution().channel_parts();
  return whole;
}

}  // namespace tessera::layers
