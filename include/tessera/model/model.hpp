#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/model/parameter_store.hpp"

namespace tessera::model {

/// Options that come from the command line rather than the model spec.
struct BuildOptions {
  std::string backend = "auto";  // default op backend for layers that do not name one
  uint64_t seed = 0;
  /// The ranks training this model together; every layer's distribution uses all of them.
  parallel::Communicator group;
};

/// A directed acyclic graph of layers, built from the "model" section of a spec:
///   {"input": {"channels": 4, "size": [32, 32, 32]},
///    "layers": [{"name": "conv1", "type": "conv3d", "filters": 16, "padding": 1}, ...]}
/// Each layer consumes the previous one unless it names its "inputs" (earlier layers, or
/// "input" for the model input); the last layer is the output. Residual adds and U-Net
/// concats are just layers with several inputs.
class Model {
 public:
  static std::unique_ptr<Model> from_json(ConfigObject& spec, const BuildOptions& options);

  /// Per-sample input shape, channels-last: [D, H, W, C], [H, W, C] or [F].
  const Shape& sample_shape() const { return sample_shape_; }
  /// The whole output shape for a global batch of `batch` samples.
  Shape output_shape(int64_t batch) const;

  /// How the model input and output are split over the ranks. The input is this rank's block
  /// of the global batch under input_grid(); the output its block under output_grid().
  const parallel::ProcessGrid& input_grid() const { return input_grid_; }
  const parallel::ProcessGrid& output_grid() const { return nodes_.back().grid; }
  /// Global batch sizes must be a multiple of this (every distribution's sample count).
  int64_t batch_multiple() const { return batch_multiple_; }
  /// True when some layer splits its samples over depth, height or width.
  bool has_spatial_split() const;

  /// Runs every layer on `input` (this rank's block of [N, ...sample_shape] under
  /// input_grid(), for the global batch step.batch); returns this rank's block of the last
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
  size_t num_layers() const { return nodes_.size(); }
  const layers::Layer& layer(size_t i) const { return *nodes_[i].layer; }
  /// A table: layer, type, output shape, parameters, backend.
  std::string summary() const;
  /// Forward FLOPs per sample of the compute-bound layers.
  double forward_flops_per_sample() const;

 private:
  struct Node {
    std::unique_ptr<layers::Layer> layer;
    parallel::ProcessGrid grid;
    layers::LayerContext context;  // what the layer was set up with
    std::string spec_path;    // where the spec defines it (for errors)
    std::vector<int> inputs;  // node indices; -1 is the model input
    int consumers = 0;
    int64_t first_parameter = 0;  // offset of this layer's first trainable parameter
    std::vector<Shape> input_shapes;  // this rank's blocks
    Shape global_output;              // the whole output for the current batch
    Tensor output, grad, scratch;     // this rank's blocks
  };
  static constexpr int kModelInput = -1;

  /// Sets every node's shapes for a global batch of `batch` samples.
  void reshape_for(int64_t batch);
  Shape global_input_shape(int64_t batch) const;
  /// Runs each activation that feeds only a max pool after that pool instead (exact; see
  /// Layer::commutes_with_max_pool). Returns the lines describing what moved.
  std::vector<std::string> move_activations_after_max_pools();
  /// Replaces each convolution whose only consumer is a fusable max pool, where fusing pays
  /// off, by one layers::ConvMaxPool (host builds only). Returns the lines describing what fused.
  std::vector<std::string> fuse_convolutions_with_max_pools();

  Shape sample_shape_;
  parallel::ProcessGrid input_grid_;
  int64_t batch_multiple_ = 1;
  int64_t current_batch_ = 0;
  std::vector<Node> nodes_;
  std::vector<std::unique_ptr<registry::OpFactory>> factories_;
  ParameterStore params_;
  Tensor input_;  // the input of the last forward, for backward
  std::vector<char> grad_written_;
};

/// Creates a layer of a spec `type` ("conv3d", "relu", ...); throws ConfigError naming the
/// path and listing the known types when it is unknown.
std::unique_ptr<layers::Layer> make_layer(const std::string& type, const std::string& name, ConfigObject& cfg);
/// The layer types the model spec accepts.
std::vector<std::string> layer_types();

}  // namespace tessera::model
