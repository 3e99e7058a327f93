#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/tensor.hpp"
#include "tessera/layers/halo_overlap.hpp"
#include "tessera/layers/layer_traits.hpp"
#include "tessera/layers/parameter.hpp"
#include "tessera/layers/value_domain.hpp"
#include "tessera/parallel/process_grid.hpp"
#include "tessera/registry/op_factory.hpp"

namespace tessera::layers {

struct PoolOptions;

enum class Mode { training, inference };

/// What a layer is told about where it runs, once, at setup.
struct LayerContext {
  const registry::OpFactory* ops = nullptr;
  /// The ranks this layer's activations are split over and this rank's place among them.
  parallel::ProcessGrid grid;
  uint64_t seed = 0;
  /// Compute what needs no halo while halos are in flight.
  HaloOverlap halo_overlap = HaloOverlap::where_it_pays;
  /// The element type the layer computes in, one of its traits().precisions: its inputs,
  /// output and their gradients are of this type (the model converts at its edges).
  ElementType precision = ElementType::fp32;
};

/// Per-step information a layer may need (dropout masks differ per step).
struct StepInfo {
  Mode mode = Mode::training;
  int64_t step = 0;
  int64_t batch = 0;  // samples in the global mini-batch (each layer knows its share from its grid)
  /// Layers that learn by a local rule (LayerTraits::learns_locally) learn from this training
  /// forward pass; otherwise they only compute.
  bool local_learning = false;
};

/// A node of the model graph. Shapes are channels-last and include the batch dimension.
/// Lifecycle: output_shape → setup (once: declare parameters) → reshape (whenever the input
/// shapes change, e.g. a smaller last batch: create ops) → forward/backward per step. Before
/// setup a layer is only its hyper-parameters: graph passes may replace it then.
class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& name() const { return name_; }
  /// The type name used in the model spec ("conv3d", "relu", ...).
  virtual std::string type() const = 0;
  /// Number of inputs; -1 means two or more.
  virtual int num_inputs() const { return 1; }

  /// Validates the input shapes and returns the output shape; throws ShapeError naming the
  /// layer when they do not fit.
  virtual Shape output_shape(const std::vector<Shape>& inputs) const = 0;
  /// Stores the context, declares parameters, then reshapes for `inputs`.
  void setup(const std::vector<Shape>& inputs, const LayerContext& ctx, ParameterRegistry& params);
  /// The first half of setup: stores the context and declares parameters, creating nothing
  /// that depends on the batch. A graph declares into a registry that only counts; setup
  /// declares again into the model's store.
  void declare(const std::vector<Shape>& inputs, const LayerContext& ctx, ParameterRegistry& params);
  /// (Re)creates whatever depends on the input shapes, such as backend ops. Called by setup
  /// and whenever the input shapes change. Shapes given to setup and reshape, and the tensors
  /// given to forward and backward, are this rank's blocks under the layer's distribution;
  /// output_shape works on whole (global) shapes.
  virtual void reshape(const std::vector<Shape>& inputs);

  virtual void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) = 0;
  /// Writes (overwrites) the gradient of each input whose `grad_inputs[i]` is not empty, and
  /// the gradients of this layer's parameters. `output` is this layer's forward output.
  virtual void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                        const std::vector<Tensor>& grad_inputs, const StepInfo& step) = 0;

  /// "kokkos", "onednn", ... for the ops this layer created (empty for pure Kokkos layers).
  virtual std::string backend() const { return ""; }
  /// What the layer decided about running split as its Distribution says (e.g. whether it
  /// overlaps its halo exchange, and why), for the model summary; empty when nothing to say.
  virtual std::string distribution_note() const { return ""; }
  /// What the planner, the bench op list and the graph passes ask of this layer; each layer
  /// type states its own (the default: none of the properties, no backend op).
  virtual LayerTraits traits() const { return {}; }
  /// The window this layer slides when split in space, for one sample `input` [1, ...]; none
  /// for layers that exchange no halos.
  virtual std::optional<SlidingWindow> window(const Shape& /*input*/) const { return std::nullopt; }
  /// The values this layer's documentation admits for its input (a bcpnn layer's
  /// complementary encoding: [0, 1]); none when any finite value will do.
  virtual std::optional<ValueDomain> input_domain() const { return std::nullopt; }
  /// The backend op this layer runs for `inputs` (one of traits().op_kinds); none for layers
  /// whose kernels are their own.
  virtual std::optional<LayerOp> backend_op(const std::vector<Shape>& /*inputs*/) const { return std::nullopt; }
  /// The pooling's options when this layer is a max pool; null otherwise.
  virtual const PoolOptions* max_pool_options() const { return nullptr; }
  /// The activation when this layer is a pointwise activation of the table; null otherwise.
  virtual const ops::EltwiseDesc* activation_desc() const { return nullptr; }
  /// One layer doing the work of this layer and of the activation `act` (named `act_name`)
  /// that alone consumes its output, in the same passes over memory, where this layer can take
  /// an activation as its epilogue; null otherwise. Asked before setup; this layer stays
  /// unchanged.
  virtual std::unique_ptr<Layer> fused_with_activation(const std::string& /*act_name*/,
                                                       const ops::EltwiseDesc& /*act*/) const {
    return nullptr;
  }
  /// One layer doing the work of this layer and of the max pool `pool` (named `pool_name`)
  /// that alone consumes its output, where such a layer exists and pays off for one sample
  /// `input` [1, ...]; null otherwise. Asked before setup; this layer stays unchanged.
  virtual std::unique_ptr<Layer> fused_with_max_pool(const std::string& /*pool_name*/, const PoolOptions& /*pool*/,
                                                     const Shape& /*input*/) const {
    return nullptr;
  }
  /// The whole (global) input shapes of which the next declare, setup or reshape gives this
  /// rank's blocks: the model tells them, since a block alone does not say its batch when
  /// sample shares are uneven, nor its channels when a channel split is.
  void set_global_inputs(std::vector<Shape> inputs) { global_inputs_ = std::move(inputs); }
  /// Forward FLOPs per sample of compute-bound work (for throughput reports).
  virtual double forward_flops(const std::vector<Shape>& /*inputs*/) const { return 0.0; }

 protected:
  virtual void declare_parameters(const std::vector<Shape>& /*inputs*/, ParameterRegistry& /*params*/) {}
  const LayerContext& context() const { return ctx_; }
  const registry::OpFactory& op_factory() const { return *ctx_.ops; }
  std::string where() const { return "layer '" + name_ + "' (" + type() + ")"; }
  const parallel::ProcessGrid& grid() const { return ctx_.grid; }
  /// The whole (global) shape of which `local`, a block of the first input, is this rank's
  /// block: what set_global_inputs gave (none given: the shape whose even split `local` is).
  Shape global_shape(const Shape& local) const;
  /// `local`, a block of input `input`, with all of its channels (the whole channels of
  /// set_global_inputs; none given: the channels whose even split `local` holds).
  Shape whole_channels(const Shape& local, size_t input = 0) const;
  /// The global batch of set_global_inputs; 0 when none was given.
  int64_t batch() const;

 private:
  std::string name_;
  /// The whole shape set_global_inputs gave for input `input`, when it is one `local` is a block
  /// of (same rank); null otherwise.
  const Shape* given_input(size_t input, const Shape& local) const;

  LayerContext ctx_;
  std::vector<Shape> global_inputs_;
};

}  // namespace tessera::layers
