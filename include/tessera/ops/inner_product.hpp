#pragma once
#include <string>

#include "tessera/core/tensor.hpp"

namespace tessera::ops {

/// y[N, out] = x[N, in] · wᵀ + b, with w [out, in] (the PyTorch Linear layout). `type` is that
/// of x, y and their gradients; w, b and their gradients are fp32 in every type (master
/// weights), as for convolutions.
struct InnerProductGeometry {
  int64_t batch = 1, in_features = 1, out_features = 1;
  ElementType type = ElementType::fp32;
};

class InnerProductOp {
 public:
  virtual ~InnerProductOp() = default;
  virtual std::string backend() const = 0;
  virtual void forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) = 0;
  virtual void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) = 0;
  /// Overwrites dw and dbias (dbias may be empty).
  virtual void backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) = 0;
};

}  // namespace tessera::ops
