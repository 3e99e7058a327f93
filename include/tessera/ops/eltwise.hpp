#pragma once
#include <string>

#include "tessera/core/tensor.hpp"
#include "tessera/ops/activations.hpp"

namespace tessera::ops {

/// A pointwise activation of the table (ops/activations.hpp); `alpha` is the value of its key
/// (LeakyReLU's negative slope, ELU's scale, the factor of "scale"), 0 for those without.
struct EltwiseDesc {
  EltwiseKind kind = EltwiseKind::relu;
  float alpha = 0.0f;
  /// The type of x, y, dx and dy.
  ElementType type = ElementType::fp32;
  /// "relu", "leaky_relu(alpha=0.01)": the name and the key's value.
  std::string str() const;
};

class EltwiseOp {
 public:
  virtual ~EltwiseOp() = default;
  virtual std::string backend() const = 0;
  virtual void forward(const Tensor& x, const Tensor& y) = 0;
  /// dx = f'(x)·dy, from the forward input x.
  virtual void backward(const Tensor& x, const Tensor& dy, const Tensor& dx) = 0;
};

}  // namespace tessera::ops
