#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/backends/kokkos/bcpnn_kernels.hpp"
#include "tessera/core/config.hpp"
#include "tessera/layers/connection_mask.hpp"
#include "tessera/layers/layer.hpp"

namespace tessera::layers {

/// The settings of a "bcpnn" layer, its keys (docs/config.md "bcpnn").
struct BcpnnOptions {
  int64_t hypercolumns = 1, minicolumns = 1;
  /// "complementary": each input value x in [0, 1] becomes the pair (x, 1 − x), a hypercolumn
  /// of two; "none": the input is read as hypercolumns of `input_minicolumns` units as it is
  /// (the output of another bcpnn layer).
  bool complementary = true;
  int64_t input_minicolumns = 2;
  /// Fraction of the input hypercolumns each output hypercolumn reads (1: all of them).
  double density = 1.0;
  /// The traces' rate α: each step moves them by α towards the batch's means.
  float trace_rate = 0.002f;
  float eps = 1e-4f;
  /// Relative spread of the joint trace's start around independence.
  float init_noise = 0.1f;
  kokkos_backend::BiasRegulation bias_regulation;
  /// Steps between structural plasticity updates (0: the connections stay as drawn), and the
  /// largest number of swaps per output hypercolumn in each.
  int64_t rewire_every = 0, rewire_swaps = 16;
  /// The precision the traces keep: bf16 rounds them to bf16 after every update (held in fp32
  /// buffers, so it measures what bf16 trace storage costs in accuracy, not its memory).
  ElementType trace_precision = ElementType::fp32;
};

/// A Bayesian Confidence Propagation Neural Network layer ("bcpnn"), after Ravichandran et
/// al., "Learning representations in Bayesian Confidence Propagation neural networks"
/// (IJCNN 2020) and Podobas et al., "StreamBrain: an HPC framework for brain-like neural
/// networks on CPUs, GPUs and FPGAs" (HEART 2021). H hypercolumns of M minicolumns read an
/// input [N, ...] (flattened in channels-last order) encoded as hypercolumns of units x_i:
///
///   s_j = b_j + Σ_i w_ij x_i,     y_j = exp(s_j) / Σ_{k in j's hypercolumn} exp(s_k)
///
/// It learns by a local, Hebbian-Bayesian rule instead of gradients, in the training forward
/// passes of local-learning steps (StepInfo::local_learning): probability traces move towards
/// the batch means, p_i ← (1 − α)p_i + α·mean x_i, p_j ← (1 − α)p_j + α·mean y_j,
/// p_ij ← (1 − α)p_ij + α·mean x_i y_j, and the weights and biases follow from them:
///
///   w_ij = log((p_ij + ε²) / ((p_i + ε)(p_j + ε))),   b_j = k_β,j · log(p_j + ε)
///
/// with w_ij = 0 where j's hypercolumn does not read i's (ConnectionMask, rewired by
/// structural plasticity every `rewire_every` steps) and the bias gain k_β from bias
/// regulation (kokkos_backend::BiasRegulation; 1 without it). Traces start at p_i = 1/M_in,
/// p_j = 1/M and p_ij = p_i·p_j jittered by `init_noise`.
///
/// The traces, the mask, the gains and the derived weights and biases are buffers, so
/// checkpoints hold them and a resumed run continues exactly; it has no trainable parameters
/// and passes no gradient to its input (its backward writes zeros there).
///
/// Split over samples, each rank sums x_i, y_j and x_i·y_j over its samples and the ranks add
/// their sums (one all-reduce of (inputs + 1)·outputs + inputs floats per step) before the
/// traces move, so every replica holds the same traces and N ranks equal one rank on the same
/// global batch. The products go to the backend's inner-product op: s = x·wᵀ + b forward, and
/// Σ_n y·xᵀ as its weight gradient of y; the rest are Kokkos kernels
/// (kokkos_backend/bcpnn_kernels.hpp). It does not split in space or over channels.
class Bcpnn final : public Layer {
 public:
  Bcpnn(std::string name, const BcpnnOptions& options);
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override { return "bcpnn"; }
  LayerTraits traits() const override;
  std::optional<LayerOp> backend_op(const std::vector<Shape>& inputs) const override;
  /// [0, 1] with complementary encoding: x and 1 − x are probabilities of a hypercolumn of two.
  std::optional<ValueDomain> input_domain() const override;
  const BcpnnOptions& options() const { return options_; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  std::string backend() const override;
  /// 2·inputs·units per sample (the support); a learning step adds as much again.
  double forward_flops(const std::vector<Shape>& inputs) const override;
  /// The connections as they are now.
  ConnectionMask connections() const;
  /// Swaps made by structural plasticity so far in this process.
  int64_t swaps_made() const { return swaps_made_; }

 protected:
  void declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) override;

 private:
  /// Encoded input units for `input` [N, ...].
  int64_t encoded_units(const Shape& input) const;
  kokkos_backend::BcpnnTraceSettings trace_settings() const;
  /// Moves the traces by this step's batch (`x` encoded, `y` the output) and derives the
  /// weights and biases again.
  void learn(const Tensor& x, const Tensor& y, const StepInfo& step);
  void rewire();
  void derive_weights();
  /// The biases from p_j, after moving the bias gains one step (bias regulation) if
  /// `move_gains`.
  void derive_bias(bool move_gains);

  BcpnnOptions options_;
  int64_t inputs_ = 0, units_ = 0, in_columns_ = 0;
  Parameter *p_i_ = nullptr, *p_j_ = nullptr, *p_ij_ = nullptr, *mask_ = nullptr, *k_beta_ = nullptr;
  Parameter *weight_ = nullptr, *bias_ = nullptr;
  Tensor encoded_;  // the encoded input of the batch
  Tensor sums_;     // Σ x·yᵀ [units, inputs], Σ y [units], Σ x [inputs], one buffer for one all-reduce
  Tensor mutual_information_;
  int64_t swaps_made_ = 0;
  std::unique_ptr<ops::InnerProductOp> op_;
};

}  // namespace tessera::layers
