#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/ops/backend.hpp"

namespace tessera::bench {

/// One op of a model's layer at the shape that layer gives it on this rank: the geometry of
/// whichever kind it is (the others stay default).
struct OpCase {
  std::string layer;  // the layer's name in the model spec
  ops::OpKind kind = ops::OpKind::conv;
  ops::ConvGeometry conv;
  ops::PoolGeometry pool;
  ops::EltwiseDesc eltwise;
  int64_t eltwise_elements = 0;
  ops::BatchNormGeometry batch_norm;
  ops::InnerProductGeometry inner_product;
  /// The layer reads the model input, whose gradient training does not compute (a first
  /// convolution runs no backward-data in a training step).
  bool reads_model_input = false;
  /// The op and its shape, as tables print it.
  std::string shape() const;
};

/// The ops of the model in a run config's "model" section for a global batch of `batch`
/// samples on this rank, in layer order: convolutions, poolings, activations, batch norms and
/// inner products. Layers of other kinds (flatten, concat, add, dropout, transposed
/// convolutions) run Kokkos code outside the op interface and are not listed. The graph passes
/// run as in training (activations move after max pools) except the fusion of convolution and
/// max pool, whose layer runs the same two ops in slabs. Throws ConfigError naming the JSON
/// path for a bad spec.
std::vector<OpCase> model_op_cases(const nlohmann::json& model_section, int64_t batch);

}  // namespace tessera::bench
