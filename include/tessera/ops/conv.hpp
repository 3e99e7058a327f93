#pragma once
#include <array>
#include <memory>
#include <string>

#include "tessera/core/tensor.hpp"

namespace tessera::ops {

/// Geometry of a 2D or 3D convolution over channels-last activations. 2D is expressed as 3D
/// with depth 1 (kernel 1, stride 1, padding 0 in depth), so one implementation serves both.
/// Weights are [out_channels, kD, kH, kW, in_channels] (ODHWI), the channels-last filter
/// layout oneDNN ("odhwi") and cuDNN (NHWC/KRSC) both accept without reorders.
struct ConvGeometry {
  int spatial_rank = 3;
  int64_t batch = 1, in_channels = 1, out_channels = 1;
  std::array<int64_t, 3> in_size{1, 1, 1};  // D, H, W
  std::array<int64_t, 3> kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> padding{0, 0, 0};   // before and after
  std::array<int64_t, 3> dilation{1, 1, 1};
  /// The type of the activations and their gradients (x, y, dx, dy). Weights, bias and their
  /// gradients are fp32 in every precision (master weights): a backend converts the weights
  /// for its kernels and accumulates in fp32.
  ElementType type = ElementType::fp32;

  std::array<int64_t, 3> out_size() const;
  int64_t kernel_volume() const { return kernel[0] * kernel[1] * kernel[2]; }
  Shape input_shape() const;
  Shape output_shape() const;
  Shape weight_shape() const;
  /// Multiply-adds ×2 of the forward pass.
  double forward_flops() const;
  /// "3d 4->16 k3x3x3 s1 p1 d1 in 1x16x16x16", prefixed "bf16 " etc. when not fp32
  std::string str() const;
  /// Throws ShapeError (prefixed with `where`) when the geometry is impossible.
  void validate(const std::string& where) const;
};

/// A convolution bound to one geometry. One instance belongs to one layer, so a backend may
/// cache primitives, algorithms and workspaces in it.
class ConvOp {
 public:
  virtual ~ConvOp() = default;
  virtual std::string backend() const = 0;
  /// y = conv(x, w) + bias (bias may be empty).
  virtual void forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) = 0;
  /// dx = conv_transpose(dy, w): overwrites dx.
  virtual void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) = 0;
  /// dw = correlation of x and dy, dbias = sum of dy (dbias may be empty): overwrite both.
  virtual void backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) = 0;
};

}  // namespace tessera::ops
