#pragma once
#include <string>

#include "tessera/core/tensor.hpp"
#include "tessera/ops/activations.hpp"

namespace tessera::ops {

/// An activation a batch norm applies to its normalised output in the same pass, and whose
/// derivative its backward passes fold in: fusion as data, as oneDNN's post-ops are (set by the
/// graph pass model/passes/fuse_batch_norm_activation). Inactive: the plain batch norm.
struct BatchNormEpilogue {
  bool active = false;
  EltwiseKind kind = EltwiseKind::relu;
  float alpha = 0.0f;  // the activation's key (ops::EltwiseDesc::alpha)
};

/// Batch normalisation over all but the channel dimension of a channels-last activation.
struct BatchNormGeometry {
  int64_t rows = 1;      // N·D·H·W: elements per channel on this process
  int64_t channels = 1;
  float epsilon = 1e-5f;
  /// The type of x, y, dy and dx; statistics and parameters are fp32 in every precision.
  ElementType type = ElementType::fp32;
  /// The activation f of y = f(γ·x̂ + β); none by default.
  BatchNormEpilogue epilogue;
};

/// Batch norm split into its local stages so that a distributed layer can reduce the
/// per-channel sums across ranks between them (the serial layer just runs them in order).
/// With an epilogue f, y = f(γ·x̂ + β) and dy is the gradient of that y: the backward stages
/// work with g = dy·f'(γ·x̂ + β) in place of dy. Backward reuses what the last normalize
/// computed, so normalize runs first.
class BatchNormOp {
 public:
  virtual ~BatchNormOp() = default;
  virtual std::string backend() const = 0;
  /// sums[c] = Σ x, sums[channels + c] = Σ x²  (sums has 2·channels elements).
  virtual void statistics(const Tensor& x, const Tensor& sums) = 0;
  /// y = f(gamma·(x − mean)·invstd + beta), f the epilogue's activation or the identity.
  virtual void normalize(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& gamma,
                         const Tensor& beta, const Tensor& y) = 0;
  /// sums[c] = Σ g, sums[channels + c] = Σ g·(x − mean)·invstd (g = dy without an epilogue).
  virtual void backward_statistics(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                                   const Tensor& sums) = 0;
  /// dx = gamma·invstd·(g − Σg/count − x̂·Σg·x̂/count), count = rows over the whole group.
  /// With `batch_stats` false (inference statistics) dx = gamma·invstd·g.
  virtual void backward_data(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                             const Tensor& gamma, const Tensor& sums, double count, bool batch_stats,
                             const Tensor& dx) = 0;
};

}  // namespace tessera::ops
