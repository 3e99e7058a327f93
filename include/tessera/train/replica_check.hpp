#pragma once
#include <cstdint>

#include "tessera/core/tensor.hpp"
#include "tessera/model/parameter_store.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::train {

/// A 64-bit fingerprint of a tensor's bits: the sum (mod 2⁶⁴) over elements of a bijective
/// mix of (index, bit pattern). Changing any one element changes it for certain; the sum does
/// not depend on the order of addition, so it is the same for any thread count or device.
uint64_t fingerprint(const Tensor& t);

/// Whether trainers check replicas when the configuration does not say: in debug builds of
/// the library (NDEBUG not defined).
bool check_replicas_by_default();

/// Data parallelism keeps one replica of the model per rank of `group`, and they must stay
/// bit-identical. Compares every trainable parameter's fingerprint over the group (an
/// all-reduce of their minima and maxima) and throws parallel::DistError naming `step` (the
/// number of optimizer steps done) and the first parameter, in declaration order, whose bits
/// differ between ranks. Collective over the group; every rank throws alike. Buffers (e.g.
/// batch-norm running statistics) are not compared: the trainer averages them over the
/// replicas after every step.
void check_replicas(const parallel::Communicator& group, const model::ParameterStore& parameters, int64_t step);

}  // namespace tessera::train
