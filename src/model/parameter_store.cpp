#include "tessera/model/parameter_store.hpp"

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/layers/shard_index.hpp"

namespace tessera::model {

layers::Parameter* ParameterStore::add(const std::string& name, const Shape& shape, layers::Init init, int64_t fan_in,
                                       int64_t fan_out, bool trainable) {
  if (finalized_) throw Error("parameter '" + name + "' declared after the parameter store was finalised");
  if (find(name)) throw Error("parameter '" + name + "' is declared twice (are two layers named alike?)");
  auto p = std::make_unique<layers::Parameter>();
  p->name = name;
  p->shape = shape;
  p->init = init;
  p->fan_in = fan_in;
  p->fan_out = fan_out;
  p->trainable = trainable;
  (trainable ? trainable_count_ : buffer_count_) += shape.numel();
  params_.push_back(std::move(p));
  return params_.back().get();
}

layers::Parameter* ParameterStore::declare(const std::string& name, const Shape& shape, layers::Init init,
                                           int64_t fan_in, int64_t fan_out) {
  return add(name, shape, init, fan_in, fan_out, true);
}

layers::Parameter* ParameterStore::declare_buffer(const std::string& name, const Shape& shape, layers::Init init) {
  return add(name, shape, init, 1, 1, false);
}

std::vector<int64_t> ParameterStore::trainable_offsets() const {
  std::vector<int64_t> offsets{0};
  for (const auto& p : params_)
    if (p->trainable) offsets.push_back(offsets.back() + p->shape.numel());
  return offsets;
}

bool ParameterStore::has_shards() const {
  for (const auto& p : params_)
    if (p->shard.split()) return true;
  return false;
}

const layers::Parameter* ParameterStore::find(const std::string& name) const {
  for (const auto& p : params_)
    if (p->name == name) return p.get();
  return nullptr;
}

void ParameterStore::finalize(uint64_t seed, layers::InitScheme scheme) {
  if (finalized_) throw Error("the parameter store is already finalised");
  values_ = Tensor(Shape{trainable_count_}, "tessera::parameters");
  grads_ = Tensor(Shape{trainable_count_}, "tessera::gradients");
  buffers_ = Tensor(Shape{buffer_count_}, "tessera::buffers");
  int64_t trainable_offset = 0, buffer_offset = 0;
  for (auto& p : params_) {
    if (p->trainable) {
      p->value = values_.slice(trainable_offset, p->shape);
      p->grad = grads_.slice(trainable_offset, p->shape);
      trainable_offset += p->shape.numel();
    } else {
      p->value = buffers_.slice(buffer_offset, p->shape);
      buffer_offset += p->shape.numel();
    }
    if (p->init == layers::Init::custom) {
      if (!p->fill) throw Error("parameter '" + p->name + "' has a custom initialisation but no fill");
      p->fill(p->value);
    } else {
      initialize(p->value, resolve(p->init, scheme), p->fan_in, p->fan_out, seed, p->name, p->shard);
    }
  }
  finalized_ = true;
}

layers::Init resolve(layers::Init init, layers::InitScheme scheme) {
  const bool uniform = scheme == layers::InitScheme::uniform_fan_in;
  if (init == layers::Init::weight) return uniform ? layers::Init::uniform_fan_in : layers::Init::he_normal;
  if (init == layers::Init::bias) return uniform ? layers::Init::uniform_fan_in : layers::Init::zeros;
  return init;
}

void initialize(const Tensor& t, layers::Init init, int64_t fan_in, int64_t fan_out, uint64_t seed,
                const std::string& name, const layers::ParameterShard& shard) {
  auto v = t.view();
  const uint64_t stream = rng::stream_of(name);
  // A shard draws the random numbers of its elements' places in the whole parameter, so it
  // holds exactly its slice of what one rank would hold.
  const layers::ShardIndex at(shard);
  switch (init) {
    case layers::Init::zeros: t.fill(0.0f); return;
    case layers::Init::ones: t.fill(1.0f); return;
    case layers::Init::he_normal: {
      const float std = static_cast<float>(std::sqrt(2.0 / static_cast<double>(std::max<int64_t>(fan_in, 1))));
      Kokkos::parallel_for(
          "tessera::init_he_normal", RangePolicy(0, t.numel()),
          KOKKOS_LAMBDA(const int64_t i) { v(i) = std * rng::normal(seed, stream, static_cast<uint64_t>(at(i))); });
      return;
    }
    case layers::Init::weight:
    case layers::Init::bias:
      throw Error("parameter '" + name + "': initialise with a concrete kind (resolve the role first)");
    case layers::Init::custom:
      throw Error("parameter '" + name + "': a custom initialisation is its layer's fill");
    case layers::Init::uniform_fan_in: {
      const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fan_in, 1))));
      Kokkos::parallel_for(
          "tessera::init_uniform_fan_in", RangePolicy(0, t.numel()), KOKKOS_LAMBDA(const int64_t i) {
            v(i) = bound * (2.0f * rng::uniform(seed, stream, static_cast<uint64_t>(at(i))) - 1.0f);
          });
      return;
    }
    case layers::Init::glorot_uniform: {
      const float bound =
          static_cast<float>(std::sqrt(6.0 / static_cast<double>(std::max<int64_t>(fan_in + fan_out, 1))));
      Kokkos::parallel_for(
          "tessera::init_glorot_uniform", RangePolicy(0, t.numel()), KOKKOS_LAMBDA(const int64_t i) {
            v(i) = bound * (2.0f * rng::uniform(seed, stream, static_cast<uint64_t>(at(i))) - 1.0f);
          });
      return;
    }
  }
}

}  // namespace tessera::model
