#include "tessera/model/graph_builder.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/layers/redistribute.hpp"
#include "tessera/model/layer_registry.hpp"
#include "tessera/model/spatial_split_alignment.hpp"
#include "tessera/parallel/placement_check.hpp"

namespace tessera::model {
namespace {

class Builder {
 public:
  Builder(const ModelSpec& spec, const BuildOptions& options) : spec_(spec), options_(options) {}
  Graph build();

 private:
  const parallel::ProcessGrid& grid_for(const parallel::Distribution& d, const std::string& path);
  registry::OpFactory* factory(const std::string& backend, const std::string& path);
  /// The node that reads `producer`'s output under `to` (a Redistribute node, made once per
  /// producer and destination, when the distributions differ).
  int redistributed(int producer, const parallel::ProcessGrid& to, const std::string& path);
  void add_layer(const LayerSpec& ls);
  void check_layer(const GraphNode& node, const LayerSpec& ls, size_t inputs) const;
  /// This rank's blocks of node `index`'s inputs at the smallest batch, after checking that its
  /// output and inputs split under their grids; ConfigError naming the node's spec otherwise.
  std::vector<Shape> check_blocks(size_t index) const;
  /// The type the layer of `node` computes in: the one asked for (its spec's or the run's)
  /// where the layer has it, else fp32; refused where the layer's spec asks for a type the
  /// layer lacks.
  ElementType precision_of(const GraphNode& node, const LayerSpec& ls) const;
  /// Sets the node's global output shape and counts its parameters, then adds it.
  int add(GraphNode node, const std::string& where);

  const ModelSpec& spec_;
  const BuildOptions& options_;
  Graph g_;
  std::map<std::string, parallel::ProcessGrid> grids_;
  std::map<std::string, registry::OpFactory*> factory_of_;
  std::map<std::pair<int, std::string>, int> moved_;
  std::vector<int> node_of_;  // the node of each layer of the spec
};

const parallel::ProcessGrid& Builder::grid_for(const parallel::Distribution& d, const std::string& path) {
  auto it = grids_.find(d.str());
  if (it == grids_.end()) {
    it = grids_.emplace(d.str(), parallel::ProcessGrid(d, options_.group, path, g_.shares, g_.alignment)).first;
    // A channel group exchanges activations at every layer: across nodes it would be slow,
    // and the launch that fixes it is simple, so it is refused rather than run.
    parallel::check_channel_group_placement(it->second, path);
  }
  g_.min_batch = std::max<int64_t>(g_.min_batch, d.sample);
  return it->second;
}

registry::OpFactory* Builder::factory(const std::string& backend, const std::string& path) {
  auto it = factory_of_.find(backend);
  if (it != factory_of_.end()) return it->second;
  try {
    g_.factories.push_back(std::make_unique<registry::OpFactory>(backend));
  } catch (const Error& e) {
    throw ConfigError(path, e.what());
  }
  return factory_of_[backend] = g_.factories.back().get();
}

int Builder::redistributed(int producer, const parallel::ProcessGrid& to, const std::string& path) {
  const bool from_input = producer == Graph::kModelInput;
  const parallel::ProcessGrid& from = from_input ? g_.input_grid : g_.nodes[static_cast<size_t>(producer)].grid();
  if (from.distribution().same_layout(to.distribution())) return producer;
  const auto key = std::make_pair(producer, to.distribution().str());
  if (auto it = moved_.find(key); it != moved_.end()) return it->second;
  const std::string from_name = from_input ? "input" : g_.nodes[static_cast<size_t>(producer)].layer->name();
  GraphNode node;
  node.layer = std::make_unique<layers::Redistribute>(from_name + "->" + to.distribution().str(), from);
  node.context.grid = to;
  node.context.seed = options_.seed;
  // The move carries the producer's type: converting first would move twice the bytes.
  node.context.precision = from_input ? ElementType::fp32 : g_.nodes[static_cast<size_t>(producer)].context.precision;
  node.spec_path = path;
  node.inputs = {producer};
  return moved_[key] = add(std::move(node), path);
}

int Builder::add(GraphNode node, const std::string& where) {
  const size_t index = g_.nodes.size();
  for (int in : node.inputs)
    if (in != Graph::kModelInput) g_.nodes[static_cast<size_t>(in)].consumers++;
  g_.nodes.push_back(std::move(node));
  GraphNode& n = g_.nodes.back();
  try {
    n.global_output = n.layer->output_shape(g_.global_inputs(index, 1));
  } catch (const ShapeError& e) {
    throw ConfigError(where, e.what());
  }
  // Blocks of a small batch only to declare parameters; the model sets the real ones.
  const std::vector<Shape> locals = check_blocks(index);
  const int64_t trainable = g_.declared->trainable_count(), buffers = g_.declared->buffer_count();
  const size_t declared = g_.declared->all().size();
  n.layer->set_global_inputs(g_.global_inputs(index, g_.min_batch));
  n.layer->declare(locals, n.context, *g_.declared);
  int64_t gathered = 0;
  for (size_t k = declared; k < g_.declared->all().size(); ++k) {
    const layers::ParameterShard& s = g_.declared->all()[k]->shard;
    if (!s.run_count.empty()) gathered += s.member_block_shape(s.index, where).numel();
  }
  n.parameters = {g_.declared->trainable_count() - trainable, g_.declared->buffer_count() - buffers, gathered};
  return static_cast<int>(index);
}

std::vector<Shape> Builder::check_blocks(size_t index) const {
  const GraphNode& n = g_.nodes[index];
  const std::string layer = "layer '" + n.layer->name() + "' (" + n.layer->type() + ")";
  std::vector<Shape> locals;
  try {
    // The layer's own output must split under its grid too: checked here, so that a window or
    // stride that leaves too few planes for the ranks is blamed on its layer, not on the next.
    Shape output = n.global_output;
    output[0] = g_.min_batch;
    n.grid().local_shape(output, layer + ": its output " + output.str());
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int in = n.inputs[k];  // its producer holds it under its own grid
      const auto& grid = in == Graph::kModelInput ? g_.input_grid : g_.nodes[static_cast<size_t>(in)].grid();
      locals.push_back(grid.local_shape(g_.global_input(index, k, g_.min_batch), layer));
    }
  } catch (const ShapeError& e) {
    throw ConfigError(n.spec_path, e.what());
  }
  return locals;
}

void Builder::check_layer(const GraphNode& node, const LayerSpec& ls, size_t inputs) const {
  const int wanted = node.layer->num_inputs();
  const int got = static_cast<int>(inputs);
  if ((wanted >= 0 && got != wanted) || (wanted < 0 && got < 2))
    throw ConfigError(ls.path + ".inputs", "layer '" + ls.name + "' (" + ls.type + ") takes " +
                                               (wanted < 0 ? std::string("two or more") : std::to_string(wanted)) +
                                               " input(s), got " + std::to_string(got));
  const parallel::Distribution& d = node.grid().distribution();
  if (d.is_spatial() && !node.layer->traits().spatial_split)
    throw ConfigError(ls.distribution ? ls.distribution_path : spec_.distribution_path,
                      "layer '" + ls.name + "' (" + ls.type + ") cannot run with its samples split in space " +
                          "(distribution " + d.str() +
                          "); give it a distribution without depth/height/width splits, e.g. {\"sample\": " +
                          std::to_string(options_.group.size()) + "}");
  if (d.splits_channels() && !node.layer->traits().channel_split)
    throw ConfigError(ls.distribution ? ls.distribution_path : spec_.distribution_path,
                      "layer '" + ls.name + "' (" + ls.type + ") cannot run with its channels split (distribution " +
                          d.str() + "); give it a distribution without \"channel\"/\"filter\" splits, e.g. " +
                          "{\"sample\": " + std::to_string(d.sample * d.channel_parts()) + "}");
}

ElementType Builder::precision_of(const GraphNode& node, const LayerSpec& ls) const {
  const ElementType wanted = ls.precision.value_or(options_.precision);
  if (wanted == ElementType::fp32) return wanted;
  const std::string key = ls.precision ? ls.precision_path : options_.precision_key;
  const std::string layer = "layer '" + ls.name + "' (" + ls.type + ")";
  if (!layers::runs_in(node.layer->traits(), wanted)) {
    if (!ls.precision) return ElementType::fp32;  // as autocast: layers without the type stay fp32
    std::string has;
    for (ElementType t : node.layer->traits().precisions)
      has += (has.empty() ? "" : ", ") + std::string(element_type_name(t));
    throw ConfigError(key, layer + " computes only in " + has + ", not " + element_type_name(wanted));
  }
  return wanted;
}

void Builder::add_layer(const LayerSpec& ls) {
  GraphNode node;
  node.spec_path = ls.path;
  node.context.ops = factory(ls.backend.value_or(spec_.backend.value_or(options_.backend)),
                             ls.backend ? ls.backend_path : spec_.backend_path);
  node.context.seed = options_.seed;
  node.context.halo_overlap = spec_.halo_overlap;
  node.context.grid = ls.distribution ? grid_for(*ls.distribution, ls.distribution_path) : g_.input_grid;
  ConfigObject cfg(ls.config, ls.path);  // checked when the spec was read
  node.layer = make_layer(ls.type, ls.name, cfg);
  check_layer(node, ls, ls.inputs.size());
  node.context.precision = precision_of(node, ls);
  for (int in : ls.inputs) {
    const int producer = in == LayerSpec::kModelInput ? Graph::kModelInput : node_of_[static_cast<size_t>(in)];
    node.inputs.push_back(redistributed(producer, node.grid(), ls.path));
  }
  node_of_.push_back(add(std::move(node), ls.path));
}

Graph Builder::build() {
  g_.sample_shape = spec_.sample_shape;
  g_.seed = options_.seed;
  g_.init = spec_.init;
  g_.fuse_conv_max_pool = spec_.fuse_conv_max_pool;
  g_.fuse_batch_norm_activation = spec_.fuse_batch_norm_activation;
  g_.layers_path = spec_.layers_path;
  g_.declared = std::make_unique<ParameterCounter>();
  g_.shares = options_.shares ? options_.shares : std::make_shared<parallel::SampleShares>(options_.group.size());
  g_.alignment = std::make_shared<parallel::SpatialAlignment>();
  parallel::Distribution data_parallel;
  data_parallel.sample = options_.group.size();
  g_.input_grid = grid_for(spec_.distribution.value_or(data_parallel), spec_.distribution_path);
  // Data sets deliver whole samples' channels; a channel split starts at a layer.
  if (g_.input_grid.distribution().splits_channels())
    throw ConfigError(spec_.distribution_path,
                      "the model's distribution " + g_.input_grid.distribution().str() +
                          " splits the input's channels; put \"channel\"/\"filter\" on the layers that should split "
                          "(a \"distribution\" per layer) and keep the model's own distribution to sample and "
                          "spatial splits");
  for (const auto& ls : spec_.layers) add_layer(ls);
  // Now that every layer is known, extents are cut where the strided layers after them need,
  // and each node's blocks checked again under those cuts.
  align_spatial_splits(g_);
  for (size_t i = 0; i < g_.nodes.size(); ++i) check_blocks(i);
  for (size_t i = 0; i + 1 < g_.nodes.size(); ++i)
    if (g_.nodes[i].consumers == 0)
      throw ConfigError(g_.nodes[i].spec_path, "the output of layer '" + g_.nodes[i].layer->name() +
                                                   "' is used by no later layer (only the last layer may be unused)");
  return std::move(g_);
}

}  // namespace

Graph build_graph(const ModelSpec& spec, const BuildOptions& options) { return Builder(spec, options).build(); }

}  // namespace tessera::model
