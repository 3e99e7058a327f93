// docs/design.md's table of layer traits, held to what each layer type declares: the table is
// made here from every registered type's traits() and window(), so a layer type added or a
// trait changed fails this test until the docs say so.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "support/layer_entries.hpp"
#include "tessera/core/config.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/model/layer_registry.hpp"
#include "tessera/ops/backend.hpp"

using namespace tessera;

namespace {

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* yes_no(bool b) { return b ? "yes" : "—"; }

/// One sample of 4 channels over 8 voxels per axis, of the type's spatial rank.
Shape one_sample(const std::string& type) {
  if (type.size() > 2 && type.compare(type.size() - 2, 2, "2d") == 0) return {1, 8, 8, 4};
  return {1, 8, 8, 8, 4};
}

std::string window_of(const layers::Layer& layer, const std::string& type) {
  const auto w = layer.window(one_sample(type));
  if (!w) return "—";
  return w->on_output ? "over its output" : "over its input";
}

std::string op_kinds(const layers::LayerTraits& t) {
  std::string s;
  for (ops::OpKind k : t.op_kinds) s += (s.empty() ? "" : ", ") + std::string(ops::op_kind_name(k));
  return s.empty() ? "its own kernels" : s;
}

std::string precisions(const layers::LayerTraits& t) {
  std::string s;
  for (ElementType p : t.precisions) s += (s.empty() ? "" : ", ") + std::string(element_type_name(p));
  return s;
}

/// The table docs/design.md shows, one row per registered layer type, made with its typed
/// builder entry's keys (the type's defaults otherwise).
std::string traits_table() {
  const auto entries = test::typed_layer_entries();
  std::string out =
      "| type | split in space | halo window | channel split | mixes channels (key) | may run after a max pool | "
      "backend ops | precisions |\n|---|---|---|---|---|---|---|---|\n";
  for (const std::string& type : model::layer_types()) {
    nlohmann::json keys = entries.at(type).keys();
    ConfigObject cfg(keys, "$.layers[0]");
    const auto layer = model::make_layer(type, "l", cfg);
    const layers::LayerTraits t = layer->traits();
    std::string mixes = yes_no(t.mixes_channels);
    if (t.output_channels_key) mixes += std::string(" (`") + t.output_channels_key + "`)";
    out += "| `" + type + "` | " + yes_no(t.spatial_split) + " | " + window_of(*layer, type) + " | " +
           yes_no(t.channel_split) + " | " + mixes + " | " + yes_no(t.commutes_with_max_pool) + " | " + op_kinds(t) +
           " | " + precisions(t) + " |\n";
  }
  return out;
}

}  // namespace

TEST_CASE("docs/design.md shows every layer type's declared traits", "[model][traits][docs]") {
  const std::string docs = file_text(std::string(TESSERA_SOURCE_DIR) + "/docs/design.md");
  REQUIRE_FALSE(docs.empty());
  const std::string table = traits_table();
  INFO("the table as the layers declare it:\n" << table);
  CHECK(docs.find(table) != std::string::npos);
}
