#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/layers/parameter.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/layer_entry.hpp"
#include "tessera/model/model.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/parallel/distribution.hpp"

namespace tessera::model {

/// Builds a model in C++, without a config file:
///
///   namespace spec = tessera::model::spec;
///   auto model = tessera::model::ModelBuilder(4, {16, 16, 16})
///                    .add("conv1", spec::conv3d(16).padding(1))
///                    .add("act1", spec::leaky_relu(0.01))
///                    .add("pool1", spec::max_pool3d(2))
///                    .add("flat", spec::flatten())
///                    .add("out", spec::dense(4))
///                    .build({"auto", /*seed=*/42});
///
/// The builder writes the "model" section a run config would hold (to_json()) and makes the
/// model from it as Model::from_json does, so a model built here equals the one from the same
/// JSON (same layers, parameters and initial weights for a seed). Errors are those of a
/// config, with paths rooted at "ModelBuilder" ("ModelBuilder.layers[2].filters: ...", the
/// index counting add() calls from 0).
class ModelBuilder {
 public:
  /// Samples of `channels` channels over `size` ([D, H, W] or [H, W]); without a size,
  /// samples are feature vectors [channels].
  explicit ModelBuilder(int64_t channels, const std::vector<int64_t>& size = {});

  /// Appends a layer. It reads the previous layer (the first: the model input) unless the
  /// entry names its inputs. Without a name it is called <type><index>, as in a config.
  ModelBuilder& add(const std::string& name, const spec::LayerEntry& layer);
  ModelBuilder& add(const spec::LayerEntry& layer);

  /// The split of every layer that names none (unset: data parallelism over every rank).
  ModelBuilder& distribution(const parallel::Distribution& d);
  /// The op backend of every layer that names none (unset: BuildOptions::backend).
  ModelBuilder& backend(const std::string& name);
  ModelBuilder& init(layers::InitScheme scheme);
  ModelBuilder& fuse_conv_max_pool(bool on);
  ModelBuilder& fuse_batch_norm_activation(bool on);
  ModelBuilder& halo_overlap(bool on);
  ModelBuilder& halo_overlap(layers::HaloOverlap mode);

  /// The "model" section of a run config that describes this model.
  const nlohmann::json& to_json() const { return model_; }
  /// That section read and checked as ModelSpec::from_json reads a config's.
  ModelSpec spec() const;
  /// Spec → graph → passes → model on the ranks of `options.group`, as Model::from_json.
  std::unique_ptr<Model> build(const BuildOptions& options = {}) const;

 private:
  nlohmann::json model_;
};

}  // namespace tessera::model
