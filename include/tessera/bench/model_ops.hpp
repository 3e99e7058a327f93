#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/shape.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/ops/backend.hpp"

namespace tessera::bench {

/// What runs a case, which decides how it is timed.
enum class CaseRunner {
  op,              // an op of the backend interface, of kind OpCase::kind
  conv_transpose,  // a transposed convolution: the backend's convolution at the adjoint geometry
  layer,           // a layer whose kernels are its own Kokkos code: the layer itself is timed
};

/// One op of a model's layer at the shape that layer gives it on this rank: the op and geometry
/// the layer declares (layers::LayerOp: for a transposed convolution, the geometry of its
/// adjoint convolution, whose input is the layer's output), and how bench runs it.
struct OpCase : layers::LayerOp {
  std::string layer;  // the layer's name in the model spec
  CaseRunner runner = CaseRunner::op;
  /// The layer reads the model input, whose gradient training does not compute (a first
  /// convolution runs no backward-data in a training step).
  bool reads_model_input = false;

  // CaseRunner::layer: what makes the layer again, and where it runs.
  std::string layer_type;         // its spec type ("concat", "dropout", ...)
  nlohmann::json layer_config;    // its spec entry's keys
  std::string layer_path;         // "$.model.layers[k]", for errors
  std::vector<Shape> inputs;      // this rank's input blocks
  std::vector<bool> input_grads;  // per input: whether training computes its gradient
  Shape output;                   // this rank's output block
  layers::LayerContext context;   // its grid and seed; the op factory is the timed backend's
  int64_t batch = 0;              // the global batch (dropout places its mask by sample)

  /// The op and its shape, as tables print it.
  std::string shape() const;
};

/// The ops of the model in a run config's "model" section for a global batch of `batch`
/// samples on this rank, in layer order: convolutions, poolings, activations, batch norms,
/// inner products and transposed convolutions, and the layers that run Kokkos code of their
/// own (flatten, concat, add, dropout, global average pooling). Redistributions between
/// layers are communication and not listed. The graph passes run as in training (activations
/// move after max pools) except the fusion of convolution and max pool, whose layer runs the
/// same two ops in slabs. Each layer's ops are of the type it computes in when the run's
/// precision is `precision` (as training builds them). Throws ConfigError naming the JSON path
/// for a bad spec.
std::vector<OpCase> model_op_cases(const nlohmann::json& model_section, int64_t batch,
                                   ElementType precision = ElementType::fp32);

}  // namespace tessera::bench
