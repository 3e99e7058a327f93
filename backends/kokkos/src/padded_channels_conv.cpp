#include "tessera/backends/kokkos/padded_channels_conv.hpp"

#include "tessera/backends/kokkos/channel_padding_kernels.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend {

PaddedChannelsConv::PaddedChannelsConv(const ops::ConvGeometry& g, const ops::ConvGeometry& padded,
                                       std::unique_ptr<ops::ConvOp> inner)
    : g_(g),
      padded_(padded),
      inner_(std::move(inner)),
      x_(padded.input_shape(), g.type, "tessera::padded_input"),
      dx_(padded.input_shape(), g.type, "tessera::padded_input_gradient"),
      w_(padded.weight_shape(), "tessera::padded_weight"),
      dw_(padded.weight_shape(), "tessera::padded_weight_gradient") {
  ops::ConvGeometry same = padded;
  same.in_channels = g.in_channels;
  if (padded.in_channels < g.in_channels || same.str() != g.str())
    throw Error("padded channels: " + padded.str() + " is not " + g.str() + " with more input channels");
}

std::string PaddedChannelsConv::what() const {
  return "convolution " + g_.str() + " (input channels padded to " + std::to_string(padded_.in_channels) + ")";
}

void PaddedChannelsConv::check(const Tensor& t, const Shape& expected, const char* name) const {
  if (t.empty() || t.numel() != expected.numel())
    throw ShapeError(what() + ": " + name + " has shape " + t.shape().str() + ", expected " + expected.str());
}

void PaddedChannelsConv::forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) {
  check(x, g_.input_shape(), "input");
  check(w, g_.weight_shape(), "weight");
  copy_channels(x, g_.in_channels, x_, padded_.in_channels, input_rows());
  copy_channels(w, g_.in_channels, w_, padded_.in_channels, weight_rows());
  inner_->forward(x_, w_, bias, y);
}

void PaddedChannelsConv::backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) {
  check(w, g_.weight_shape(), "weight");
  check(dx, g_.input_shape(), "input gradient");
  copy_channels(w, g_.in_channels, w_, padded_.in_channels, weight_rows());
  inner_->backward_data(dy, w_, dx_);
  copy_channels(dx_, padded_.in_channels, dx, g_.in_channels, input_rows());
}

void PaddedChannelsConv::backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) {
  check(x, g_.input_shape(), "input");
  check(dw, g_.weight_shape(), "weight gradient");
  copy_channels(x, g_.in_channels, x_, padded_.in_channels, input_rows());
  inner_->backward_weights(x_, dy, dw_, dbias);
  copy_channels(dw_, padded_.in_channels, dw, g_.in_channels, weight_rows());
}

}  // namespace tessera::kokkos_backend
