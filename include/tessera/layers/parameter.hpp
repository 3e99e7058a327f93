#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "tessera/core/tensor.hpp"
#include "tessera/layers/parameter_shard.hpp"

namespace tessera::layers {

/// How a parameter is initialised. `weight` and `bias` name a role: the model's init scheme
/// ("init" in the spec) decides their distribution, so one spec can match another framework's
/// defaults. Random kinds draw from the counter-based RNG keyed by the parameter's full name,
/// so the values do not depend on rank count or thread count.
enum class Init {
  zeros,
  ones,
  weight,          // he_normal, or uniform_fan_in under the uniform_fan_in scheme
  bias,            // zeros, or uniform_fan_in under the uniform_fan_in scheme
  he_normal,       // N(0, 2/fan_in)
  glorot_uniform,  // U(±sqrt(6/(fan_in + fan_out)))
  uniform_fan_in,  // U(±1/sqrt(fan_in)): PyTorch's default for Conv and Linear
  custom,          // Parameter::fill, the declaring layer's own rule
};

/// The model-wide choice that resolves Init::weight and Init::bias.
enum class InitScheme { he_normal, uniform_fan_in };

/// One named parameter (trainable weight) or buffer (state such as running statistics).
/// `value` and `grad` are valid once the owning store is finalised; buffers have no grad.
struct Parameter {
  std::string name;  // "<layer>.<param>", unique in a model
  Shape shape;       // this rank's part (the whole parameter unless shard.split())
  Init init = Init::zeros;
  int64_t fan_in = 1, fan_out = 1;
  bool trainable = true;
  /// A buffer its layer keeps equal on every replica by its own collectives (e.g. traces
  /// summed over the ranks of a batch): not averaged over replicas after each step, and
  /// compared across them like trainable values.
  bool synchronized = false;
  /// Init::custom: fills `value` when the store initialises it (in declaration order, so it
  /// may read parameters declared before it).
  std::function<void(const Tensor& value)> fill;
  Tensor value;
  Tensor grad;
  /// Which slice of the whole parameter this rank holds (set by declare_shard).
  ParameterShard shard;
};

/// Where layers declare their parameters; the model's ParameterStore implements it and lays
/// all of them out in one contiguous buffer (so gradients can be reduced in a few buckets).
class ParameterRegistry {
 public:
  virtual ~ParameterRegistry() = default;
  /// The returned pointer stays valid for the registry's lifetime.
  virtual Parameter* declare(const std::string& name, const Shape& shape, Init init, int64_t fan_in,
                             int64_t fan_out) = 0;
  /// Non-trainable state saved in checkpoints (e.g. batch-norm running mean).
  virtual Parameter* declare_buffer(const std::string& name, const Shape& shape, Init init) = 0;
};

/// Declares this rank's slice `shard` of a parameter (trainable unless `buffer`): the registry
/// holds the slice's shape, and the whole shape and slice are recorded on the parameter, so
/// it is initialised as the matching part of the whole one and gradients sum over
/// shard.replicas. Without a split it is a plain declaration.
inline Parameter* declare_shard(ParameterRegistry& params, const std::string& name, const ParameterShard& shard,
                                Init init, int64_t fan_in, int64_t fan_out, bool buffer = false) {
  const Shape local = shard.local_shape("parameter '" + name + "'");
  Parameter* p = buffer ? params.declare_buffer(name, local, init) : params.declare(name, local, init, fan_in, fan_out);
  p->shard = shard;
  return p;
}

}  // namespace tessera::layers
