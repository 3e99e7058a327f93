#pragma once
#include <string>

#include "tessera/core/tensor.hpp"

namespace tessera::ops {

/// Batch normalisation over all but the channel dimension of a channels-last activation.
struct BatchNormGeometry {
  int64_t rows = 1;      // N·D·H·W: elements per channel on this process
  int64_t channels = 1;
  float epsilon = 1e-5f;
  /// The type of x, y, dy and dx; statistics and parameters are fp32 in every precision.
  ElementType type = ElementType::fp32;
};

/// Batch norm split into its local stages so that a distributed layer can reduce the
/// per-channel sums across ranks between them (the serial layer just runs them in order).
class BatchNormOp {
 public:
  virtual ~BatchNormOp() = default;
  virtual std::string backend() const = 0;
  /// sums[c] = Σ x, sums[channels + c] = Σ x²  (sums has 2·channels elements).
  virtual void statistics(const Tensor& x, const Tensor& sums) = 0;
  /// y = gamma·(x − mean)·invstd + beta.
  virtual void normalize(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& gamma,
                         const Tensor& beta, const Tensor& y) = 0;
  /// sums[c] = Σ dy, sums[channels + c] = Σ dy·(x − mean)·invstd.
  virtual void backward_statistics(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                                   const Tensor& sums) = 0;
  /// dx = gamma·invstd·(dy − Σdy/count − x̂·Σdy·x̂/count), count = rows over the whole group.
  /// With `batch_stats` false (inference statistics) dx = gamma·invstd·dy.
  virtual void backward_data(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                             const Tensor& gamma, const Tensor& sums, double count, bool batch_stats,
                             const Tensor& dx) = 0;
};

}  // namespace tessera::ops
