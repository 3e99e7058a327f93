#pragma once
#include <array>
#include <string>

#include "tessera/core/tensor.hpp"

namespace tessera::ops {

enum class PoolKind { max, average };

/// Geometry of a 2D/3D pooling window over channels-last activations (2D as depth 1).
/// Average pooling divides by the number of in-bounds elements (padding excluded).
struct PoolGeometry {
  PoolKind kind = PoolKind::max;
  int spatial_rank = 3;
  int64_t batch = 1, channels = 1;
  std::array<int64_t, 3> in_size{1, 1, 1};
  std::array<int64_t, 3> kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> padding{0, 0, 0};
  /// The type of x, y, dx and dy.
  ElementType type = ElementType::fp32;

  std::array<int64_t, 3> out_size() const;
  Shape input_shape() const;
  Shape output_shape() const;
  std::string str() const;
  void validate(const std::string& where) const;
};

/// Pooling bound to one geometry; keeps what backward needs from forward (e.g. the argmax
/// of each max window), so forward must run before backward on the same instance.
class PoolOp {
 public:
  virtual ~PoolOp() = default;
  virtual std::string backend() const = 0;
  virtual void forward(const Tensor& x, const Tensor& y) = 0;
  /// dx (overwritten) from dy; x is the forward input.
  virtual void backward(const Tensor& x, const Tensor& dy, const Tensor& dx) = 0;
};

}  // namespace tessera::ops
