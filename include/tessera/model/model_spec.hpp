#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/config.hpp"
#include "tessera/core/element_type.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/layers/halo_overlap.hpp"
#include "tessera/layers/parameter.hpp"
#include "tessera/parallel/distribution.hpp"

namespace tessera::model {

/// One entry of "layers": what it is, what it reads and where it runs. Its own keys (filters,
/// kernel, ...) were validated by its layer's from_json; `config` keeps them to make the layer
/// again, as often as a graph is built.
struct LayerSpec {
  std::string name, type;
  std::string path;  // "$.model.layers[3]", for errors
  nlohmann::json config;
  /// Indices of earlier entries of ModelSpec::layers; kModelInput is the model input.
  std::vector<int> inputs;
  std::optional<std::string> backend;  // unset: the model's
  std::string backend_path;
  std::optional<parallel::Distribution> distribution;  // unset: the model's
  std::string distribution_path;
  std::optional<ElementType> precision;  // unset: the run's
  std::string precision_path;

  static constexpr int kModelInput = -1;
};

/// The "model" section of a spec, read and checked as JSON (every error names its JSON path);
/// what depends on the ranks or on shapes is the graph builder's to check.
///   {"input": {"channels": 4, "size": [32, 32, 32]},
///    "layers": [{"name": "conv1", "type": "conv3d", "filters": 16, "padding": 1}, ...]}
/// Each layer consumes the previous one unless it names its "inputs" (earlier layers, or
/// "input" for the model input); the last layer is the output.
struct ModelSpec {
  std::string path;                    // "$.model"
  Shape sample_shape;                  // per sample, channels-last: [D, H, W, C], [H, W, C] or [F]
  std::optional<std::string> backend;  // unset: the command line's
  std::string backend_path;
  layers::HaloOverlap halo_overlap = layers::HaloOverlap::where_it_pays;
  bool fuse_conv_max_pool = true;
  bool fuse_batch_norm_activation = true;
  layers::InitScheme init = layers::InitScheme::he_normal;
  std::optional<parallel::Distribution> distribution;  // unset: data parallelism over every rank
  std::string distribution_path;
  /// "distribution": "auto": the planner chooses every layer's distribution at start-up
  /// (plan/layout_planner.hpp); layers may then not name their own.
  bool distribution_auto = false;
  std::vector<LayerSpec> layers;
  std::string layers_path;

  /// Reads `spec` and finishes it (unknown keys are errors).
  static ModelSpec from_json(ConfigObject& spec);
};

/// The precision named by `key` of `cfg` ("fp32", "bf16", "fp16"); a ConfigError naming the
/// key for another name. Whether a backend computes in it is asked when the ops are made.
ElementType read_precision(ConfigObject& cfg, const std::string& key);
/// The same for a name given outside a config (e.g. --precision), `where` naming its source.
ElementType parse_precision(const std::string& name, const std::string& where);

/// A whole run's precision (training.precision, --precision): an element type, or "tf32" (fp32
/// data, TF32 tensor-core products in cuDNN's convolutions), which a layer cannot take alone.
struct RunPrecision {
  ElementType type = ElementType::fp32;
  bool tf32 = false;
};
/// A ConfigError naming `where` and listing every run precision for another name.
RunPrecision parse_run_precision(const std::string& name, const std::string& where);

/// Reads a "distribution" object ({"sample": 2, "depth": 2}; every count defaults to 1).
parallel::Distribution read_distribution(ConfigObject cfg);

}  // namespace tessera::model
