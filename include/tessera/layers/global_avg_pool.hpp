#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"

namespace tessera::layers {

/// Global average pooling ("global_avg_pool2d" [N, H, W, C] or "global_avg_pool3d"
/// [N, D, H, W, C] -> [N, C], no keys): the mean of each channel over all positions of a
/// sample, as ResNets use before their classifier. Under a spatial split each rank sums its
/// block and the spatial group sums the blocks, so the features (and the layers after them)
/// are replicated on every rank of the group, as after a flatten.
class GlobalAvgPool final : public Layer {
 public:
  GlobalAvgPool(std::string name, int spatial_rank) : Layer(std::move(name)), spatial_rank_(spatial_rank) {}
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return spatial_rank_ == 2 ? "global_avg_pool2d" : "global_avg_pool3d"; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  /// Split over channels: per channel, a slice of the channels pools alone, giving that slice
  /// of the features.
  LayerTraits traits() const override {
    LayerTraits t;
    t.spatial_split = true;
    t.channel_split = true;
    return t;
  }
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;

 private:
  int spatial_rank_;
  float scale_ = 1.0f;  // 1 / the positions of a whole sample
  bool split_ = false;  // this rank holds a block of each sample
  Tensor grad_sum_;     // the gradient summed over the spatial group
};

}  // namespace tessera::layers
