#pragma once
// The cuDNN ops' factories, each in its own file, and what they share. Private to the backend.
#include <memory>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/ops/conv.hpp"
#include "tessera/ops/pool.hpp"

namespace tessera::cudnn_backend {

/// Each returns nullptr, and says why in `why`, when cuDNN cannot run the case (e.g. tensors
/// beyond its 32-bit sizes, or no deterministic algorithm for a convolution pass), so that
/// `auto` uses Kokkos.
std::unique_ptr<ops::ConvOp> make_conv(const ops::ConvGeometry& g, std::string& why);
std::unique_ptr<ops::PoolOp> make_pool(const ops::PoolGeometry& g, std::string& why);

/// Throws ShapeError unless `t` holds exactly `expected.numel()` elements (the ops read flat
/// memory, so e.g. a [N, H, W, C] tensor may carry an [N, 1, H, W, C] geometry).
inline void require_elements(const Tensor& t, const Shape& expected, const std::string& op, const char* what) {
  if (t.empty() || t.numel() != expected.numel())
    throw ShapeError("cudnn " + op + ": " + what + " has shape " + t.shape().str() + ", expected " + expected.str());
}

}  // namespace tessera::cudnn_backend
