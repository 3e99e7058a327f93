// What each layer type declares (LayerTraits, its window, its backend op), read as the planner
// and the bench op list read it: for every registered type, made from a config.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "tessera/model/layer_registry.hpp"

using namespace tessera;

namespace {

/// A layer of `type` with the keys it needs, made as a config entry would make it.
std::unique_ptr<layers::Layer> make(const std::string& type, nlohmann::json keys = nlohmann::json::object()) {
  static const std::map<std::string, nlohmann::json> needed{{"conv2d", {{"filters", 6}}},
                                                            {"conv3d", {{"filters", 6}, {"padding", 1}}},
                                                            {"conv_transpose2d", {{"filters", 6}}},
                                                            {"conv_transpose3d", {{"filters", 6}, {"stride", 2}}},
                                                            {"dense", {{"units", 5}}},
                                                            {"bcpnn", {{"hypercolumns", 2}, {"minicolumns", 3}}}};
  if (const auto it = needed.find(type); it != needed.end() && keys.empty()) keys = it->second;
  ConfigObject cfg(keys, "$.layers[0]");
  return model::make_layer(type, "l", cfg);
}

/// One sample's input for `type`: channels-last, of the layer's spatial rank.
Shape sample_input(const std::string& type) {
  if (type == "dense") return Shape{1, 12};
  if (type.find("2d") != std::string::npos) return Shape{1, 8, 8, 4};
  return Shape{1, 8, 8, 8, 4};
}

}  // namespace

TEST_CASE("every layer type's backend op is among the op kinds it declares", "[model][traits]") {
  for (const std::string& type : model::layer_types()) {
    INFO(type);
    const auto layer = make(type);
    const layers::LayerTraits t = layer->traits();
    CHECK(t.precisions.front() == ElementType::fp32);  // every layer runs in fp32
    CHECK(t.mixes_channels == (t.output_channels_key != nullptr));
    std::vector<Shape> inputs{sample_input(type)};
    if (layer->num_inputs() != 1) inputs.push_back(inputs[0]);
    if (const auto op = layer->backend_op(inputs))
      CHECK(std::find(t.op_kinds.begin(), t.op_kinds.end(), op->kind) != t.op_kinds.end());
    else
      CHECK(t.op_kinds.empty());
  }
}

TEST_CASE("sliding-window layers declare their window and what mixes channels", "[model][traits]") {
  const auto conv = make("conv3d", {{"filters", 6}, {"kernel", 3}, {"padding", 1}});
  const auto w = conv->window(Shape{1, 8, 8, 8, 4});
  REQUIRE(w.has_value());
  CHECK(w->window.kernel == std::array<int64_t, 3>{3, 3, 3});
  CHECK(w->window.padding == std::array<int64_t, 3>{1, 1, 1});
  CHECK_FALSE(w->on_output);
  CHECK(conv->traits().output_channels_key == std::string("filters"));

  const auto up = make("conv_transpose2d", {{"filters", 6}, {"kernel", 2}, {"stride", 2}});
  const auto uw = up->window(Shape{1, 8, 8, 4});
  REQUIRE(uw.has_value());
  CHECK(uw->on_output);
  CHECK(uw->window.kernel == std::array<int64_t, 3>{1, 2, 2});  // a 2D window is one deep
  CHECK(uw->window.stride == std::array<int64_t, 3>{1, 2, 2});

  const auto pool = make("max_pool3d");
  REQUIRE(pool->window(Shape{1, 8, 8, 8, 4}).has_value());
  CHECK(pool->window(Shape{1, 8, 8, 8, 4})->window.kernel == std::array<int64_t, 3>{2, 2, 2});
  CHECK(make("dense")->traits().output_channels_key == std::string("units"));

  for (const std::string type : {"relu", "batch_norm", "dropout", "flatten", "add", "concat", "dense"}) {
    INFO(type);
    CHECK_FALSE(make(type)->window(sample_input(type)).has_value());
  }
  CHECK_FALSE(make("relu")->traits().mixes_channels);
  CHECK(make("relu")->traits().commutes_with_max_pool);
  CHECK_FALSE(make("gelu")->traits().commutes_with_max_pool);
  CHECK_FALSE(make("max_pool3d")->traits().commutes_with_max_pool);
}
