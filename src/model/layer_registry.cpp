// The layer types of the model spec. Adding a layer: its file, its test, one line here, and
// its entry in model/layer_entry.hpp. Activations come from their table (ops/activations.hpp).
#include <map>

#include "tessera/core/error.hpp"
#include "tessera/layers/activation.hpp"
#include "tessera/layers/add.hpp"
#include "tessera/layers/batch_norm.hpp"
#include "tessera/layers/bcpnn.hpp"
#include "tessera/layers/concat.hpp"
#include "tessera/layers/conv.hpp"
#include "tessera/layers/conv_transpose.hpp"
#include "tessera/layers/dense.hpp"
#include "tessera/layers/dropout.hpp"
#include "tessera/layers/flatten.hpp"
#include "tessera/layers/global_avg_pool.hpp"
#include "tessera/layers/pool.hpp"
#include "tessera/model/layer_registry.hpp"

namespace tessera::model {
namespace {

using Factory = std::unique_ptr<layers::Layer> (*)(const std::string&, ConfigObject&, int);
struct LayerType {
  Factory make;
  int spatial_rank;  // 2 or 3 for dimensioned layers, 0 for layers that accept any rank
};

/// One type per row of the activation table.
void add_activations(std::map<std::string, LayerType>& t) {
  ops::Activations::for_each([&](auto row) {
    using Row = decltype(row);
    t.emplace(Row::name, LayerType{&layers::Activation::from_json<Row::kind>, 0});
  });
}

const std::map<std::string, LayerType>& types() {
  using namespace layers;
  static const std::map<std::string, LayerType> t = [] {
    std::map<std::string, LayerType> all{
        {"conv2d", {&Conv::from_json, 2}},
        {"conv3d", {&Conv::from_json, 3}},
        {"conv_transpose2d", {&ConvTranspose::from_json, 2}},
        {"conv_transpose3d", {&ConvTranspose::from_json, 3}},
        {"max_pool2d", {&Pool::from_json<ops::PoolKind::max>, 2}},
        {"max_pool3d", {&Pool::from_json<ops::PoolKind::max>, 3}},
        {"avg_pool2d", {&Pool::from_json<ops::PoolKind::average>, 2}},
        {"avg_pool3d", {&Pool::from_json<ops::PoolKind::average>, 3}},
        {"global_avg_pool2d", {&GlobalAvgPool::from_json, 2}},
        {"global_avg_pool3d", {&GlobalAvgPool::from_json, 3}},
        {"batch_norm", {&BatchNorm::from_json, 0}},
        {"bcpnn", {&Bcpnn::from_json, 0}},
        {"dropout", {&Dropout::from_json, 0}},
        {"dense", {&Dense::from_json, 0}},
        {"flatten", {&Flatten::from_json, 0}},
        {"add", {&Add::from_json, 0}},
        {"concat", {&Concat::from_json, 0}},
    };
    add_activations(all);
    return all;
  }();
  return t;
}

}  // namespace

std::unique_ptr<layers::Layer> make_layer(const std::string& type, const std::string& name, ConfigObject& cfg) {
  const auto it = types().find(type);
  if (it == types().end()) {
    std::string known;
    for (const auto& [k, v] : types()) known += (known.empty() ? "" : ", ") + k;
    throw ConfigError(cfg.path_of("type"), "unknown layer type \"" + type + "\" (known: " + known + ")");
  }
  return it->second.make(name, cfg, it->second.spatial_rank);
}

std::vector<std::string> layer_types() {
  std::vector<std::string> names;
  for (const auto& [k, v] : types()) names.push_back(k);
  return names;
}

}  // namespace tessera::model
