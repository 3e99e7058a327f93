#pragma once
#include <string>

#include "tessera/core/tensor.hpp"

namespace tessera::ops {

enum class EltwiseKind { relu, leaky_relu, elu, tanh, scale };

/// A pointwise activation; `alpha` is LeakyReLU's negative slope, ELU's scale or the factor
/// of "scale" (y = alpha·x); tanh has none.
struct EltwiseDesc {
  EltwiseKind kind = EltwiseKind::relu;
  float alpha = 0.0f;
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
