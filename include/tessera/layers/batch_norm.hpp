#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"

namespace tessera::layers {

/// Batch normalisation over every dimension but the channel (last) one of a rank-2, 4 or 5
/// channels-last activation ("batch_norm"; keys "momentum" 0.1, "epsilon" 1e-5).
/// Training mode normalises with the batch statistics and updates the running statistics the
/// PyTorch way: running = (1 − momentum)·running + momentum·batch, with the unbiased batch
/// variance. Inference mode normalises with the running statistics.
/// Parameters `<name>.gamma`, `<name>.beta`; buffers `<name>.running_mean`, `<name>.running_var`.
/// An activation that alone reads its output is fused into it by a graph pass
/// (fuse_batch_norm_activation): the layer `<name>+<activation>` computes f(γ·x̂ + β) in the
/// normalisation's pass and folds f' into its backward passes, so the activation's input and
/// its gradient are never stored. Its parameters keep the batch norm's names.
class BatchNorm final : public Layer {
 public:
  BatchNorm(std::string name, double momentum, double epsilon);
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override;
  /// Split in space: statistics are reduced over the spatial group. Split over channels: per
  /// channel, a slice of the channels runs alone.
  LayerTraits traits() const override;
  /// The batch norm op over the rows and channels of `inputs[0]`.
  std::optional<LayerOp> backend_op(const std::vector<Shape>& inputs) const override;
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  std::string backend() const override;
  /// This batch norm with the activation `act` (named `act_name`) as its epilogue; null when it
  /// has one already.
  std::unique_ptr<Layer> fused_with_activation(const std::string& act_name, const ops::EltwiseDesc& act) const override;
  /// The activation fused into it, if any (inactive otherwise).
  const ops::BatchNormEpilogue& epilogue() const { return epilogue_; }

  double momentum() const { return momentum_; }
  double epsilon() const { return epsilon_; }

 protected:
  void declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) override;

 private:
  /// Rows the statistics are taken over: this rank's, or the whole sample group's with sync.
  /// The ranks whose statistics are combined, and the number of values per channel they cover.
  const parallel::Communicator& statistics_group() const;
  double group_rows(const StepInfo& step) const;
  bool sync_ = false;  // statistics over the whole sample group (synchronised batch norm)
  std::string parameter_name_;  // the batch norm's own name, which its parameters carry
  ops::BatchNormEpilogue epilogue_;
  std::string activation_type_;  // the fused activation's type ("relu"), empty when none
  double momentum_, epsilon_;
  int64_t channels_ = 0, rows_ = 0, samples_ = 0;
  int64_t spatial_group_rows_ = 0;  // rows of this rank's samples over its whole spatial group
  Parameter* gamma_ = nullptr;
  Parameter* beta_ = nullptr;
  Parameter* running_mean_ = nullptr;
  Parameter* running_var_ = nullptr;
  std::unique_ptr<ops::BatchNormOp> op_;
  // Per-channel state of the last forward, which backward reuses.
  Tensor sums_, mean_, invstd_, grad_sums_;
};

}  // namespace tessera::layers
