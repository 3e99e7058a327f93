// The pass that runs an activation after the max pool it feeds, on the graph alone.
#include <catch2/catch.hpp>

#include "tessera/model/graph_builder.hpp"
#include "tessera/model/passes/move_activations_after_max_pools.hpp"

using namespace tessera;

namespace {
model::Graph graph_of(const std::string& layers) {
  const auto json =
      nlohmann::json::parse(R"({"input": {"channels": 2, "size": [6, 6, 6]}, "layers": [)" + layers + "]}");
  ConfigObject cfg(json, "$.model");
  return model::build_graph(model::ModelSpec::from_json(cfg), {});
}
}  // namespace

TEST_CASE("An activation that feeds only a max pool runs after it", "[model][passes]") {
  auto g = graph_of(R"({"name": "c", "type": "conv3d", "filters": 3, "padding": 1},
      {"name": "a", "type": "leaky_relu", "alpha": 0.1, "backend": "kokkos"}, {"name": "p", "type": "max_pool3d"},
      {"name": "f", "type": "flatten"})");
  const auto lines = model::passes::move_activations_after_max_pools(g);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "graph: 'a' (leaky_relu) runs after 'p' (max_pool3d): same result on fewer elements");
  CHECK(g.nodes[1].layer->name() == "p");
  CHECK(g.nodes[2].layer->name() == "a");
  CHECK(g.nodes[2].context.ops->preference() == "kokkos");  // the activation keeps its backend
  CHECK(g.nodes[1].context.ops->preference() == "auto");
  CHECK(g.nodes[1].global_output == Shape{1, 3, 3, 3, 3});
  CHECK(g.nodes[2].global_output == Shape{1, 3, 3, 3, 3});
  CHECK(g.nodes[2].inputs == std::vector<int>{1});
  CHECK(g.nodes[3].inputs == std::vector<int>{2});
}

TEST_CASE("Activations stay before average pools, non-monotone maps and shared outputs", "[model][passes]") {
  auto average = graph_of(R"({"name": "a", "type": "relu"}, {"name": "p", "type": "avg_pool3d"})");
  CHECK(model::passes::move_activations_after_max_pools(average).empty());
  auto shared = graph_of(R"({"name": "a", "type": "relu"}, {"name": "p", "type": "max_pool3d"},
      {"name": "q", "type": "max_pool3d", "inputs": "a"}, {"name": "s", "type": "add", "inputs": ["p", "q"]})");
  CHECK(model::passes::move_activations_after_max_pools(shared).empty());
  CHECK(shared.nodes[0].layer->name() == "a");
  auto pool_first = graph_of(R"({"name": "p", "type": "max_pool3d"}, {"name": "a", "type": "relu"})");
  CHECK(model::passes::move_activations_after_max_pools(pool_first).empty());
}

TEST_CASE("A non-monotone activation stays before a max pool, whatever the sign of its key", "[model][passes]") {
  // GELU dips below 0 near x = −0.75: pooling first would change the result. Its key value is
  // 0, which a rule on the key's sign alone would take for a safe move.
  auto gelu = graph_of(R"({"name": "a", "type": "gelu"}, {"name": "p", "type": "max_pool3d"})");
  CHECK(gelu.nodes[0].layer->traits().commutes_with_max_pool == false);
  CHECK(model::passes::move_activations_after_max_pools(gelu).empty());
  CHECK(gelu.nodes[0].layer->name() == "a");
  // A negative scale is decreasing: max pooling would pick the wrong element.
  auto negative = graph_of(R"({"name": "a", "type": "scale", "factor": -2}, {"name": "p", "type": "max_pool3d"})");
  CHECK(model::passes::move_activations_after_max_pools(negative).empty());
  auto positive = graph_of(R"({"name": "a", "type": "scale", "factor": 2}, {"name": "p", "type": "max_pool3d"})");
  CHECK(model::passes::move_activations_after_max_pools(positive).size() == 1);
}
