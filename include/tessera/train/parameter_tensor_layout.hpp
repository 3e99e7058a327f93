#pragma once
#include "tessera/model/parameter_store.hpp"
#include "tessera/optim/parameter_tensors.hpp"

namespace tessera::train {

/// The trainable tensors of `parameters` as a layer-wise optimizer sees them: where each lies
/// in the flat buffers, whether it is one-dimensional in the whole model, and how to complete
/// a shard's partial norms: summed over the shard's group (the ranks holding the other slices
/// of the same tensor), so that every rank's trust ratio is the whole tensor's. `parameters`
/// must outlive the result.
optim::ParameterTensors parameter_tensor_layout(const model::ParameterStore& parameters);

}  // namespace tessera::train
