// Every layer type the model spec accepts has a typed ModelBuilder entry (model/layer_entry.hpp)
// that writes that type: a type registered without one fails here.
#include <catch2/catch.hpp>
#include <map>

#include "tessera/model/layer_entry.hpp"
#include "tessera/model/layer_registry.hpp"

using namespace tessera;
namespace spec = tessera::model::spec;

namespace {

/// The typed entries by the type they write; activations come from their table.
std::map<std::string, spec::LayerEntry> typed_entries() {
  const std::vector<spec::LayerEntry> entries{
      spec::conv2d(4),           spec::conv3d(4),           spec::conv_transpose2d(4), spec::conv_transpose3d(4),
      spec::max_pool2d(),        spec::max_pool3d(),        spec::avg_pool2d(),        spec::avg_pool3d(),
      spec::global_avg_pool2d(), spec::global_avg_pool3d(), spec::batch_norm(),        spec::dense(4),
      spec::dropout(),           spec::flatten(),           spec::add({"a", "b"}),     spec::concat({"a", "b"})};
  std::map<std::string, spec::LayerEntry> by_type;
  for (const auto& e : entries) by_type.emplace(e.type(), e);
  ops::Activations::for_each([&](auto row) {
    const spec::LayerEntry e = spec::activation<decltype(row)>();
    by_type.emplace(e.type(), e);
  });
  return by_type;
}

}  // namespace

TEST_CASE("every registered layer type has a typed builder entry", "[model][builder]") {
  const auto typed = typed_entries();
  for (const std::string& type : model::layer_types()) {
    INFO(type);
    CHECK(typed.count(type) == 1);
  }
}

TEST_CASE("the activations' named entries write their rows' types and keys", "[model][builder]") {
  CHECK(spec::tanh().type() == "tanh");
  CHECK(spec::scale(1.2).keys() == nlohmann::json{{"factor", 1.2}});
  CHECK(spec::leaky_relu(0.2).keys() == nlohmann::json{{"alpha", 0.2}});
  CHECK(spec::global_avg_pool3d().type() == "global_avg_pool3d");
}
