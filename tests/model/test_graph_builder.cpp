// The model spec read as JSON, and the graph built from it without allocating: shapes,
// consumers, Redistribute nodes, and per-rank parameter and activation footprints.
#include <catch2/catch.hpp>

#include "tessera/model/graph_builder.hpp"
#include "tessera/model/model.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/registry/backend_registry.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

model::ModelSpec read_spec(const json& spec) {
  ConfigObject cfg(spec, "$.model");
  return model::ModelSpec::from_json(cfg);
}

const json kNet = json::parse(R"({
    "input": {"channels": 2, "size": [6, 6, 6]}, "init": "uniform_fan_in", "halo_overlap": false,
    "layers": [
      {"name": "stem", "type": "conv3d", "filters": 4, "padding": 1, "backend": "kokkos"},
      {"name": "bn", "type": "batch_norm"},
      {"name": "a", "type": "conv3d", "filters": 4, "padding": 1},
      {"name": "res", "type": "add", "inputs": ["bn", "a"]},
      {"name": "cat", "type": "concat", "inputs": ["res", "input"]},
      {"name": "pool", "type": "max_pool3d"},
      {"type": "flatten"},
      {"name": "head", "type": "dense", "units": 5}
    ]})");

}  // namespace

TEST_CASE("The model spec resolves names, inputs and defaults", "[model][spec]") {
  const auto spec = read_spec(kNet);
  CHECK(spec.sample_shape == Shape{6, 6, 6, 2});
  CHECK_FALSE(spec.backend.has_value());
  CHECK(spec.halo_overlap == layers::HaloOverlap::off);
  CHECK(spec.fuse_conv_max_pool);
  CHECK(spec.init == layers::InitScheme::uniform_fan_in);
  CHECK_FALSE(spec.distribution.has_value());
  REQUIRE(spec.layers.size() == 8);
  CHECK(spec.layers[0].inputs == std::vector<int>{model::LayerSpec::kModelInput});
  CHECK(spec.layers[0].backend == std::optional<std::string>("kokkos"));
  CHECK(spec.layers[0].backend_path == "$.model.layers[0].backend");
  CHECK(spec.layers[1].inputs == std::vector<int>{0});
  CHECK(spec.layers[3].inputs == std::vector<int>{1, 2});
  CHECK(spec.layers[4].inputs == std::vector<int>{3, model::LayerSpec::kModelInput});
  CHECK(spec.layers[6].name == "flatten6");
  CHECK(spec.layers[6].path == "$.model.layers[6]");
  CHECK(spec.layers[7].config.at("units") == 5);
}

TEST_CASE("A graph is built without setting a layer up", "[model][graph]") {
  const auto spec = read_spec(kNet);
  const model::Graph g = model::build_graph(spec, {});
  REQUIRE(g.nodes.size() == 8);
  CHECK(g.min_batch == 1);
  CHECK(g.init == layers::InitScheme::uniform_fan_in);
  CHECK(g.nodes[0].layer->backend().empty());  // no op made
  CHECK(g.nodes[0].context.ops->preference() == "kokkos");
  CHECK(g.nodes[2].context.ops->preference() == "auto");
  CHECK(g.nodes[2].context.halo_overlap == layers::HaloOverlap::off);
  CHECK(g.nodes[1].consumers == 2);  // a and res
  CHECK(g.nodes[3].inputs == std::vector<int>{1, 2});
  CHECK(g.nodes[4].inputs == std::vector<int>{3, model::Graph::kModelInput});
  CHECK(g.nodes[4].global_output == Shape{1, 6, 6, 6, 6});
  CHECK(g.nodes[7].global_output == Shape{1, 5});
  CHECK(g.nodes[7].consumers == 0);
  CHECK(g.nodes[0].parameters.trainable == 4 * 27 * 2 + 4);
  CHECK(g.nodes[1].parameters.trainable == 8);
  CHECK(g.nodes[1].parameters.buffers == 8);
  CHECK(g.nodes[5].parameters.trainable == 0);
}

TEST_CASE("A graph's footprint counts what the model allocates", "[model][graph]") {
  const auto spec = read_spec(kNet);
  const model::Graph g = model::build_graph(spec, {});
  const auto f = g.footprint(4);
  REQUIRE(f.nodes.size() == g.nodes.size());
  CHECK(f.nodes[4].layer == "cat");
  CHECK(f.nodes[4].activation_bytes == 4 * 6 * 6 * 6 * 6 * 4);
  int64_t per_sample = 0;  // one rank holds the whole batch
  for (const auto& node : g.nodes) per_sample += node.global_output.numel() * static_cast<int64_t>(sizeof(float));
  CHECK(f.activation_bytes == 4 * per_sample);

  json text = kNet;
  ConfigObject cfg(text, "$.model");
  const auto m = model::Model::from_json(cfg, {});
  const auto& store = m->parameters();
  CHECK(f.parameters.trainable == store.trainable_count());
  CHECK(f.parameters.buffers == store.buffer_count());
  CHECK(f.parameter_bytes == (store.values().numel() + store.grads().numel() + store.buffers().numel()) *
                                 static_cast<int64_t>(sizeof(float)));
}

TEST_CASE("Graph errors name the JSON path of the layer", "[model][graph]") {
  auto fails_with = [](const std::string& layers, const std::string& path, const std::string& text) {
    INFO(layers);
    const auto spec =
        read_spec(json::parse(R"({"input": {"channels": 2, "size": [8, 8, 8]}, "layers": [)" + layers + "]}"));
    CHECK_THROWS_WITH(model::build_graph(spec, {}), Catch::Contains(path) && Catch::Contains(text));
  };
  fails_with(R"({"type": "add"})", "$.model.layers[0].inputs", "two or more");
  fails_with(R"({"type": "relu"}, {"type": "dense", "units": 3})", "$.model.layers[1]", "flatten");
  fails_with(R"({"name": "x", "type": "relu"}, {"type": "relu", "inputs": "input"})", "$.model.layers[0]",
             "used by no later layer");
  fails_with(R"({"type": "relu", "distribution": {"depth": 2}})", "$.model.layers[0].distribution",
             "needs 2 ranks but the job has 1");
  fails_with(R"({"type": "relu", "backend": "fpga"})", "$.model.layers[0].backend", "not compiled into this build");
}

TEST_CASE("The summary gives the reason of each backend that declined an op", "[model][summary]") {
  const auto spec = json::parse(R"({"input": {"channels": 3, "size": [4, 4, 4]}, "layers": [
      {"name": "c", "type": "conv3d", "filters": 3, "padding": 1}, {"name": "bn", "type": "batch_norm"}]})");
  ConfigObject cfg(spec, "$.model");
  const auto m = model::Model::from_json(cfg, {});
  const std::string summary = m->summary();
  const std::string total = "total trainable parameters: ";
  const std::string after = summary.substr(summary.find('\n', summary.find(total)) + 1);
  const auto backends = registry::available_backends();
  if (!backends.empty() && backends.front() == "onednn") {
    // oneDNN's batch norm leaves no point for the cross-rank reduction: kokkos runs it.
    CHECK_THAT(after, Catch::StartsWith("bn: batch norm over 3 channels: kokkos (onednn: "));
    CHECK(after.find("c: ") == std::string::npos);
  } else {
    CHECK(after.empty());
  }
}

TEST_CASE("A cube distribution is q samples, channels and filters with sharded weights", "[model][spec]") {
  const auto read = [](const json& d) {
    ConfigObject cfg(d, "$.model.distribution");
    return model::read_distribution(cfg);
  };
  const parallel::Distribution cube = read({{"cube", 2}, {"depth", 2}});
  CHECK(cube.sample == 2);
  CHECK(cube.channel == 2);
  CHECK(cube.filter == 2);
  CHECK(cube.depth == 2);
  CHECK(cube.shard_weights);
  CHECK(cube.str() == "{sample 2, channel 2, filter 2, depth 2, weights sharded}");
  // The same counts written out name the same distribution; only the weights differ from a
  // plain grid, and the activations are laid out alike.
  CHECK(read({{"cube", 2}, {"sample", 2}, {"depth", 2}}) == cube);
  const parallel::Distribution grid = read({{"sample", 2}, {"channel", 2}, {"filter", 2}, {"depth", 2}});
  CHECK_FALSE(grid == cube);
  CHECK(grid.same_layout(cube));
  CHECK(read({{"sample", 4}, {"weights", "sharded"}}).str() == "{sample 4, weights sharded}");
  CHECK(read({{"weights", "sharded"}}).str() == "{sample 1, weights sharded}");
  // A cube has equal sides; the error names the key and both counts.
  CHECK_THROWS_WITH(read({{"cube", 2}, {"filter", 4}}), Catch::Contains("$.model.distribution.filter") &&
                                                            Catch::Contains("\"cube\": 2") &&
                                                            Catch::Contains("asks for 4"));
  CHECK_THROWS_WITH(read({{"cube", 2}, {"weights", "replicated"}}), Catch::Contains("cannot keep them"));
  CHECK_THROWS_WITH(read({{"weights", "halved"}}), Catch::Contains("$.model.distribution.weights"));
  CHECK_THROWS_AS(read({{"cube", 0}}), ConfigError);
}
