// Every layer type the model spec accepts has a typed ModelBuilder entry (model/layer_entry.hpp)
// that writes that type: a type registered without one fails here.
#include <catch2/catch.hpp>
#include <map>

#include "support/layer_entries.hpp"
#include "tessera/model/layer_registry.hpp"

using namespace tessera;
namespace spec = tessera::model::spec;

TEST_CASE("every registered layer type has a typed builder entry", "[model][builder]") {
  const auto typed = test::typed_layer_entries();
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
