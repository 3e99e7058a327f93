#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/parallel/channel_exchange.hpp"

namespace tessera::layers {

/// Concatenation of two or more inputs along the channel (last) dimension ("concat", no
/// keys), e.g. a U-Net skip connection; all other dimensions must be equal. Under a channel
/// split the slices of the inputs do not line up with the output's slice, so each rank
/// gathers the inputs' channels, concatenates the whole and keeps its slice; backward gathers
/// the output gradient and keeps each input's slice of it.
class Concat final : public Layer {
 public:
  explicit Concat(std::string name) : Layer(std::move(name)) {}
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return "concat"; }
  /// Split in space or over channels: blocks of equally distributed inputs line up.
  LayerTraits traits() const override {
    LayerTraits t;
    t.spatial_split = true;
    t.channel_split = true;
    t.precisions = {ElementType::fp32, ElementType::bf16, ElementType::fp16};
    return t;
  }
  int num_inputs() const override { return -1; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  void reshape(const std::vector<Shape>& inputs) override;

 private:
  /// Under a channel split: per input and for the output, the exchange between this rank's
  /// slice and the whole block, and the whole block (its gradient for backward).
  struct Whole {
    parallel::ChannelExchange exchange;
    Tensor value, grad;
  };
  std::vector<Whole> inputs_;
  Whole output_;
};

}  // namespace tessera::layers
