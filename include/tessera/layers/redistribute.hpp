#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/layers/layer.hpp"
#include "tessera/parallel/redistribution.hpp"

namespace tessera::layers {

/// Moves an activation from one distribution to another between two layers that want it split
/// differently (CosmoFlow's convolutions split in space, its dense layers over samples). The
/// model inserts it; it is not written in a model spec. Its grid is the destination's; the
/// source grid is given at construction. Its gradient is the inverse move. It moves the values
/// in the type its source layer produces (its precision is set to the source's), so a bf16
/// activation travels as bf16.
class Redistribute final : public Layer {
 public:
  Redistribute(std::string name, parallel::ProcessGrid from) : Layer(std::move(name)), from_(std::move(from)) {}

  std::string type() const override { return "redistribute"; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  /// It moves blocks between distributions of any split, in any type.
  LayerTraits traits() const override {
    LayerTraits t;
    t.spatial_split = true;
    t.channel_split = true;
    t.precisions = {ElementType::fp32, ElementType::bf16, ElementType::fp16};
    return t;
  }
  const parallel::ProcessGrid& source_grid() const { return from_; }

 private:
  parallel::ProcessGrid from_;
  Shape input_;  // the local input shape the redistribution was made for
  int64_t input_batch_ = 0;  // and the global batch
  uint64_t shares_version_ = 0;
  std::unique_ptr<parallel::Redistribution> move_;
};

}  // namespace tessera::layers
