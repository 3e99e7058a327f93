#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"

namespace tessera::model {

/// Creates a layer of a spec `type` ("conv3d", "relu", ...); throws ConfigError naming the
/// path and listing the known types when it is unknown.
std::unique_ptr<layers::Layer> make_layer(const std::string& type, const std::string& name, ConfigObject& cfg);
/// The layer types the model spec accepts.
std::vector<std::string> layer_types();

}  // namespace tessera::model
