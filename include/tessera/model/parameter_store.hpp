#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/layers/parameter.hpp"

namespace tessera::model {

/// Owns every parameter of a model. Trainable values live in one contiguous buffer and their
/// gradients in another, in declaration order, so an optimizer updates them in one kernel and
/// gradient reduction can work on a few large buckets. Buffers (running statistics) live in a
/// third contiguous buffer.
class ParameterStore final : public layers::ParameterRegistry {
 public:
  layers::Parameter* declare(const std::string& name, const Shape& shape, layers::Init init, int64_t fan_in,
                             int64_t fan_out) override;
  layers::Parameter* declare_buffer(const std::string& name, const Shape& shape, layers::Init init) override;

  /// Allocates the buffers, binds every parameter's value/grad tensors and initialises them
  /// from `seed` (each random parameter from the stream of its name, so the result does not
  /// depend on how many ranks later share the work). Declaring after this is an error.
  void finalize(uint64_t seed, layers::InitScheme scheme = layers::InitScheme::he_normal);
  bool finalized() const { return finalized_; }

  /// All trainable values / gradients as flat tensors (empty if there are none).
  const Tensor& values() const { return values_; }
  const Tensor& grads() const { return grads_; }
  const Tensor& buffers() const { return buffers_; }
  int64_t trainable_count() const { return trainable_count_; }
  int64_t buffer_count() const { return buffer_count_; }
  const std::vector<std::unique_ptr<layers::Parameter>>& all() const { return params_; }
  const layers::Parameter* find(const std::string& name) const;
  /// Whether some parameter is a shard of a channel-split layer (ParameterShard).
  bool has_shards() const;
  /// Where each trainable tensor starts in values()/grads(), then their total size.
  std::vector<int64_t> trainable_offsets() const;

 private:
  layers::Parameter* add(const std::string& name, const Shape& shape, layers::Init init, int64_t fan_in,
                         int64_t fan_out, bool trainable);
  std::vector<std::unique_ptr<layers::Parameter>> params_;
  Tensor values_, grads_, buffers_;
  int64_t trainable_count_ = 0, buffer_count_ = 0;
  bool finalized_ = false;
};

/// Init::weight and Init::bias resolved under `scheme`; other kinds unchanged.
layers::Init resolve(layers::Init init, layers::InitScheme scheme);
/// Fills `t` following `init` (a concrete kind) from the counter-based RNG stream of `name`;
/// a shard gets the values of its slice of the whole parameter.
void initialize(const Tensor& t, layers::Init init, int64_t fan_in, int64_t fan_out, uint64_t seed,
                const std::string& name, const layers::ParameterShard& shard = {});

}  // namespace tessera::model
