#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/channel_split.hpp"
#include "tessera/layers/halo_overlapped_conv.hpp"
#include "tessera/layers/haloed_input.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/layers/overlap_choice.hpp"
#include "tessera/layers/sharded_weight.hpp"
#include "tessera/ops/conv.hpp"

namespace tessera::layers {

/// Hyper-parameters of a convolution layer; per-axis values are D, H, W (2D uses depth 1).
struct ConvOptions {
  int spatial_rank = 3;
  int64_t filters = 1;
  std::array<int64_t, 3> kernel{3, 3, 3};
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> padding{0, 0, 0};
  std::array<int64_t, 3> dilation{1, 1, 1};
  bool bias = true;
};

/// 2D/3D convolution ("conv2d", "conv3d") over channels-last input [N, (D,) H, W, C]. Keys:
/// "filters" (required), "kernel" (3), "stride" (1), "padding" (0), "dilation" (1), each one
/// integer or a list per axis, and "bias" (true). Parameters `<name>.weight`
/// [filters, (kD,) kH, kW, C] (ODHWI / OHWI) and `<name>.bias` [filters].
/// Split in space it exchanges halos, computing the outputs that need none while they travel
/// (HaloOverlappedConv) where that can pay and, measured on the first training steps, does
/// (OverlapChoice); its input-gradient halos travel while it computes the weight gradient.
/// "halo_overlap": false in the model exchanges first, "always" overlaps without measuring;
/// split over channels it holds a shard of the weights and communicates within its
/// channel group as ChannelSplit describes (filter: output channels, channel: input channels).
class Conv final : public Layer {
 public:
  Conv(std::string name, const ConvOptions& options);
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return options_.spatial_rank == 2 ? "conv2d" : "conv3d"; }
  const ConvOptions& options() const { return options_; }
  /// The geometry for one input shape; throws ShapeError naming the layer if it does not fit.
  ops::ConvGeometry geometry(const Shape& input) const;
  /// The weight and bias parameters (bias null without one), declared at setup.
  Parameter* weight() const { return weight_; }
  Parameter* bias() const { return bias_; }

  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  std::string backend() const override;
  /// 2·kD·kH·kW·C·filters per output position of one sample.
  double forward_flops(const std::vector<Shape>& inputs) const override;
  /// Split in space with halos; mixes channels ("filters").
  LayerTraits traits() const override;
  std::optional<SlidingWindow> window(const Shape& input) const override;
  std::optional<LayerOp> backend_op(const std::vector<Shape>& inputs) const override;
  std::string distribution_note() const override;
  /// A ConvMaxPool where ConvMaxPool::can_fuse and ConvMaxPool::pays_off.
  std::unique_ptr<Layer> fused_with_max_pool(const std::string& pool_name, const PoolOptions& pool,
                                             const Shape& input) const override;

 protected:
  void declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) override;

 private:
  const Shape& single_input(const std::vector<Shape>& inputs) const;

  ConvOptions options_;
  int64_t in_channels_ = 0;  // all input channels, also under a channel split
  Parameter* weight_ = nullptr;
  Parameter* bias_ = nullptr;
  Shape op_input_;  // the input shape op_ was made for
  ChannelSplit split_;
  ShardedWeight weight_block_;
  HaloedInput halo_;
  HaloOverlappedConv overlap_;  // active when the halo exchange can overlap the interior
  OverlapChoice choice_;        // whether it does, this step
  bool backward_overlapped_ = false;
  std::unique_ptr<ops::ConvOp> op_;
};

}  // namespace tessera::layers
