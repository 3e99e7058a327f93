#include "tessera/model/model_builder.hpp"

#include "tessera/core/config.hpp"

namespace tessera::model {
namespace {

/// The root of error paths: a builder has no file, and its layers are counted by add() calls.
const char* const kPath = "ModelBuilder";

}  // namespace

ModelBuilder::ModelBuilder(int64_t channels, const std::vector<int64_t>& size) {
  model_ = {{"input", {{"channels", channels}}}, {"layers", nlohmann::json::array()}};
  if (!size.empty()) model_["input"]["size"] = size;
}

ModelBuilder& ModelBuilder::add(const std::string& name, const spec::LayerEntry& layer) {
  nlohmann::json entry = layer.keys();
  entry["type"] = layer.type();
  entry["name"] = name;
  model_["layers"].push_back(std::move(entry));
  return *this;
}

ModelBuilder& ModelBuilder::add(const spec::LayerEntry& layer) {
  nlohmann::json entry = layer.keys();
  entry["type"] = layer.type();
  model_["layers"].push_back(std::move(entry));
  return *this;
}

ModelBuilder& ModelBuilder::distribution(const parallel::Distribution& d) {
  model_["distribution"] = spec::distribution_json(d);
  return *this;
}

ModelBuilder& ModelBuilder::backend(const std::string& name) {
  model_["backend"] = name;
  return *this;
}

ModelBuilder& ModelBuilder::init(layers::InitScheme scheme) {
  model_["init"] = scheme == layers::InitScheme::he_normal ? "he_normal" : "uniform_fan_in";
  return *this;
}

ModelBuilder& ModelBuilder::fuse_conv_max_pool(bool on) {
  model_["fuse_conv_max_pool"] = on;
  return *this;
}

ModelBuilder& ModelBuilder::fuse_batch_norm_activation(bool on) {
  model_["fuse_batch_norm_activation"] = on;
  return *this;
}

ModelBuilder& ModelBuilder::halo_overlap(bool on) {
  model_["halo_overlap"] = on;
  return *this;
}

ModelBuilder& ModelBuilder::halo_overlap(layers::HaloOverlap mode) {
  if (mode == layers::HaloOverlap::always)
    model_["halo_overlap"] = "always";
  else
    model_["halo_overlap"] = mode == layers::HaloOverlap::where_it_pays;
  return *this;
}

ModelSpec ModelBuilder::spec() const {
  ConfigObject cfg(model_, kPath);
  return ModelSpec::from_json(cfg);
}

std::unique_ptr<Model> ModelBuilder::build(const BuildOptions& options) const {
  ConfigObject cfg(model_, kPath);
  return Model::from_json(cfg, options);
}

}  // namespace tessera::model
