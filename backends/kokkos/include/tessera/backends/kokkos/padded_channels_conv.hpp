#pragma once
// A convolution computed by another ConvOp over its input padded with zero channels and its
// weights padded with zero input channels: the same outputs and gradients, since the added
// channels multiply zeros. The cuDNN backend runs 16-bit layers of few input channels so
// (tensor-core kernels take 16-bit tensors whose channels are a multiple of 8); the adapter
// itself is backend-neutral, so the CPU tests check it over the Kokkos convolution.
#include <memory>
#include <string>

#include "tessera/core/tensor.hpp"
#include "tessera/ops/conv.hpp"

namespace tessera::kokkos_backend {

class PaddedChannelsConv final : public ops::ConvOp {
 public:
  /// `inner` computes `padded`: `g` with more input channels, all else equal.
  PaddedChannelsConv(const ops::ConvGeometry& g, const ops::ConvGeometry& padded, std::unique_ptr<ops::ConvOp> inner);

  std::string backend() const override { return inner_->backend(); }
  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) override;
  void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) override;
  void backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) override;

 private:
  std::string what() const;
  // Channels are innermost in both layouts (NDHWC activations, ODHWI weights).
  int64_t input_rows() const { return g_.input_shape().numel() / g_.in_channels; }
  int64_t weight_rows() const { return g_.weight_shape().numel() / g_.in_channels; }
  void check(const Tensor& t, const Shape& expected, const char* name) const;

  ops::ConvGeometry g_, padded_;
  std::unique_ptr<ops::ConvOp> inner_;
  Tensor x_, dx_, w_, dw_;  // padded copies: activations of the layer's type, weights fp32
};

}  // namespace tessera::kokkos_backend
