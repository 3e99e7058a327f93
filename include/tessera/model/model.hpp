#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/model/graph.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/layer_registry.hpp"
#include "tessera/model/parameter_store.hpp"

namespace tessera::model {

/// A graph of layers that runs: it sets the layers of a built (and rewritten) Graph up, lays
/// their parameters out in one ParameterStore, and runs forward and backward. Residual adds
/// and U-Net concats are just layers with several inputs. Each layer's output is of the type
/// the layer computes in (its context's precision); where a layer reads an input of another
/// type, the model converts it into a buffer of the layer's type (and the gradient back), so
/// layers see only their own type. The model's input and output are fp32.
class Model {
 public:
  /// Spec → graph → passes → model: reads the "model" section of a spec (see ModelSpec),
  /// builds its graph, runs every graph pass, and sets the result up.
  static std::unique_ptr<Model> from_json(ConfigObject& spec, const BuildOptions& options);
  /// Sets up every layer of `graph`, shaped for a batch of graph.min_batch samples, and
  /// initialises the parameters from graph.seed.
  explicit Model(Graph graph);
  /// Per-sample input shape, channels-last: [D, H, W, C], [H, W, C] or [F].
  const Shape& sample_shape() const { return graph_.sample_shape; }
  /// The whole output shape for a global batch of `batch` samples.
  Shape output_shape(int64_t batch) const;

  /// How the model input and output are split over the ranks. The input is this rank's block
  /// of the global batch under input_grid(); the output its block under output_grid().
  const parallel::ProcessGrid& input_grid() const { return graph_.input_grid; }
  const parallel::ProcessGrid& output_grid() const { return graph_.nodes.back().grid(); }
  /// The smallest global batch: one sample for each sample group of every distribution.
  int64_t min_batch() const { return graph_.min_batch; }
  /// What this rank holds of the model for a global batch (Graph::footprint).
  Footprint footprint(int64_t batch) const { return graph_.footprint(batch); }
  /// Whether a global batch of `batch` gives every sample group of every layer a sample.
  bool splits(int64_t batch) const;
  /// How batches split over the ranks (every layer's grid holds these). After a change of
  /// weights the next forward reshapes every layer for the new blocks.
  parallel::SampleShares& sample_shares() const { return *graph_.shares; }
  /// True when some layer splits its samples over depth, height or width.
  bool has_spatial_split() const;

  /// Runs every layer on `input` (this rank's block of [N, ...sample_shape] under
  /// input_grid(), for the global batch step.batch; with step.batch 0 the ranks of the input's
  /// sample groups add their blocks up to learn it); returns this rank's block of the last
  /// layer's output. The returned tensor stays valid until the next forward.
  const Tensor& forward(const Tensor& input, const layers::StepInfo& step);
  /// Back-propagates `grad_output` (same shape as the output) and writes every parameter's
  /// gradient. Must follow a forward in training mode. After each layer, `on_progress` (if set)
  /// learns that every gradient at index >= its argument in parameters().grads() is final
  /// (parameters are laid out in graph order, and backprop runs in reverse).
  void backward(const Tensor& grad_output, const layers::StepInfo& step,
                const std::function<void(int64_t)>& on_progress = {});

  ParameterStore& parameters() { return params_; }
  const ParameterStore& parameters() const { return params_; }
  size_t num_layers() const { return graph_.nodes.size(); }
  const layers::Layer& layer(size_t i) const { return *graph_.nodes[i].layer; }
  /// A layer that reads the model's input and documents what that input must hold.
  struct InputDomain {
    std::string path, name, type;  // path: where the spec defines the layer
    layers::ValueDomain domain;
  };
  /// Every such layer, in graph order: what each batch of input data is checked against.
  std::vector<InputDomain> input_domains() const;
  /// One layer as the run header and the metrics log show it.
  struct LayerRow {
    std::string name, type;
    Shape output;  // the whole output for the current batch
    int64_t parameters = 0;
    std::string backend, precision;
    std::string distribution;  // "" when the layer is not split
  };
  /// Every layer, in graph order.
  std::vector<LayerRow> layer_rows() const;
  /// A table of layer_rows(); then the spatial extents the ranks split into blocks of different
  /// sizes, with each block's planes; then, for each op for which a backend declined, the
  /// layer, the op and why.
  std::string summary() const;
  /// Forward FLOPs per sample of the compute-bound layers.
  double forward_flops_per_sample() const;
  /// Bytes of the activations this rank holds now: every layer's output, the gradients and
  /// conversion buffers the last forward and backward allocated. Not the input batch, which
  /// the caller holds (the data, in fp32 whatever the layers compute in).
  int64_t activation_bytes() const;
  /// "fp32", or e.g. "bf16 (12 of 21 layers; the others fp32)".
  std::string precision_summary() const;

 private:
  /// "depth 64 over 3 ranks: blocks of 20, 24, 20 planes (units of 4, …)" per uneven extent.
  std::string uneven_split_notes() const;
  /// What a node holds while the model runs, beside its GraphNode.
  struct NodeState {
    int64_t first_parameter = 0;      // offset of the layer's first trainable parameter
    std::vector<Shape> input_shapes;  // this rank's blocks
    Shape global_output;              // the whole output for the current batch
    Tensor output, grad, scratch;     // this rank's blocks
    /// Per input: the input converted to this layer's type, and the gradient the layer
    /// writes for it in that type; empty where the producer's type is the layer's.
    std::vector<Tensor> converted_input, converted_grad;
  };

  /// The type node `producer`'s output is of (fp32 for the model input).
  ElementType type_of(int producer) const;
  /// Input k of node i as the layer reads it: its producer's output, or converted.
  const Tensor& layer_input(size_t i, size_t k, bool convert);
  /// The tensor node i's backward writes input k's gradient into: the producer's gradient,
  /// its scratch (then `in` joins `accumulate`), a conversion buffer, or none for the data.
  Tensor gradient_target(size_t i, size_t k, std::vector<int>& accumulate);
  /// After node i's backward: converts the gradient it wrote for input k in its own type into
  /// the producer's gradient (or adds it there), where the types differ.
  void take_converted_grad(size_t i, size_t k);

  void set_up_layers();
  /// Logs which layers run an op on a fallback backend, and why (registry::declined_notes).
  void say_declined_ops() const;
  /// Sets every node's shapes for a global batch of `batch` samples.
  void reshape_for(int64_t batch);

  Graph graph_;
  std::vector<NodeState> state_;
  int64_t current_batch_ = 0;
  uint64_t current_shares_ = 0;  // the SampleShares version the shapes follow
  ParameterStore params_;
  Tensor input_;  // the input of the last forward, for backward
  Tensor output_fp32_, grad_output_converted_;  // where the last layer is not fp32
  std::vector<char> grad_written_;
};

}  // namespace tessera::model
