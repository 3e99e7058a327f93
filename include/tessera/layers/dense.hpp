#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/channel_split.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/layers/sharded_weight.hpp"

namespace tessera::layers {

/// Fully connected layer ("dense"; keys "units" (required), "bias" true): y = x·wᵀ + b for an
/// input [N, features]; a spatial input needs a "flatten" layer first. Parameters
/// `<name>.weight` [units, features] (the PyTorch Linear layout) and `<name>.bias` [units].
/// Split over channels its features are split over the channel group: under "filter" each
/// rank holds the rows of its units, under "channel" the columns of its input features
/// (ChannelSplit).
class Dense final : public Layer {
 public:
  Dense(std::string name, int64_t units, bool bias);
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return "dense"; }
  /// Features are whole on every rank of a spatial group: it runs replicated there. Mixes
  /// channels ("units").
  LayerTraits traits() const override;
  std::optional<LayerOp> backend_op(const std::vector<Shape>& inputs) const override;
  int64_t units() const { return units_; }
  bool has_bias() const { return bias_enabled_; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  std::string backend() const override;
  /// 2·features·units per sample.
  double forward_flops(const std::vector<Shape>& inputs) const override;

 protected:
  void declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) override;

 private:
  int64_t units_;
  bool bias_enabled_;
  int64_t in_features_ = 0;
  Parameter* weight_ = nullptr;
  Parameter* bias_ = nullptr;
  ChannelSplit split_;
  ShardedWeight weight_block_;
  std::unique_ptr<ops::InnerProductOp> op_;
};

}  // namespace tessera::layers
