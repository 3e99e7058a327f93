#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "tessera/backends/kokkos/conv_kernels.hpp"
#include "tessera/core/config.hpp"
#include "tessera/layers/channel_split.hpp"
#include "tessera/layers/haloed_input.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/layers/sharded_weight.hpp"
#include "tessera/ops/conv.hpp"

namespace tessera::layers {

/// Hyper-parameters of a transposed convolution; per-axis values are D, H, W (2D uses depth 1).
struct ConvTransposeOptions {
  int spatial_rank = 3;
  int64_t filters = 1;
  std::array<int64_t, 3> kernel{2, 2, 2};
  std::array<int64_t, 3> stride{2, 2, 2};
  std::array<int64_t, 3> padding{0, 0, 0};
  std::array<int64_t, 3> output_padding{0, 0, 0};
  bool bias = true;
};

/// 2D/3D transposed convolution ("conv_transpose2d", "conv_transpose3d"), the up-sampling of
/// U-Nets. Keys: "filters" (required), "kernel" (2), "stride" (2), "padding" (0),
/// "output_padding" (0, less than the stride), "bias" (true). Output size per axis:
/// (in − 1)·stride − 2·padding + kernel + output_padding.
///
/// It is the adjoint of the convolution from its output to its input, so it runs on that
/// convolution's ConvOp (any backend): forward = conv backward-data, backward-data = conv
/// forward, weight gradient = conv backward-weights with the roles of x and dy swapped.
/// Parameters `<name>.weight` [C, (kD,) kH, kW, filters] (that convolution's ODHWI weights,
/// C the input channels) and `<name>.bias` [filters]. Split over channels it holds the
/// weights of its filters ("filter") or of its input channels ("channel") as ChannelSplit
/// describes; under "channel" each rank adds its slice of the whole bias after the partial
/// outputs are summed.
class ConvTranspose final : public Layer {
 public:
  ConvTranspose(std::string name, const ConvTransposeOptions& options);
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return options_.spatial_rank == 2 ? "conv_transpose2d" : "conv_transpose3d"; }
  const ConvTransposeOptions& options() const { return options_; }
  /// The convolution whose input is this layer's output and whose output is this layer's
  /// input; throws ShapeError naming the layer if the input does not fit.
  ops::ConvGeometry adjoint_geometry(const Shape& input) const;

  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  std::string backend() const override;
  /// Split in space with halos on its output; mixes channels ("filters").
  LayerTraits traits() const override;
  std::optional<SlidingWindow> window(const Shape& input) const override;
  /// Its adjoint convolution and its bias.
  std::optional<LayerOp> backend_op(const std::vector<Shape>& inputs) const override;
  /// The same multiply-adds as the adjoint convolution: 2·kD·kH·kW·C·filters per input position.
  double forward_flops(const std::vector<Shape>& inputs) const override;

 protected:
  void declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) override;

 private:
  const Shape& single_input(const std::vector<Shape>& inputs) const;

  ConvTransposeOptions options_;
  int64_t in_channels_ = 0;
  Parameter* weight_ = nullptr;
  Parameter* bias_ = nullptr;
  Shape op_input_;
  /// The bias (or its gradient) for this rank's output channels.
  Tensor own_bias(const Tensor& bias) const;
  ChannelSplit split_;
  ShardedWeight weight_block_;
  HaloedInput halo_;  // around the output: the adjoint convolution's input
  std::unique_ptr<ops::ConvOp> op_;
  kokkos_backend::ConvWorkspace<float> bias_workspace_;  // the bias-gradient reduction's partial sums
};

}  // namespace tessera::layers
