// The pass that fuses a convolution with the max pool after it, on the graph alone, and the
// parameters of the fused model against the unfused one.
#include <catch2/catch.hpp>

#include "support/skip.hpp"

#include "tessera/model/graph_builder.hpp"
#include "tessera/model/model.hpp"
#include "tessera/model/passes/fuse_conv_max_pool.hpp"

using namespace tessera;

namespace {
// conv2's output is 4 MB a sample, more than a slab: it fuses; conv3's (128 KB) does not.
const std::string kLayers = R"("layers": [
    {"name": "conv1", "type": "conv3d", "filters": 4, "padding": 1},
    {"name": "conv2", "type": "conv3d", "filters": 16, "padding": 1},
    {"name": "pool2", "type": "max_pool3d"},
    {"name": "conv3", "type": "conv3d", "filters": 4, "padding": 1},
    {"name": "pool3", "type": "max_pool3d"},
    {"name": "flat", "type": "flatten"}, {"name": "d", "type": "dense", "units": 2}]})";

nlohmann::json spec(bool fuse) {
  return nlohmann::json::parse(R"({"input": {"channels": 1, "size": [16, 64, 64]}, "fuse_conv_max_pool": )" +
                               std::string(fuse ? "true" : "false") + ", " + kLayers);
}

model::Graph graph_of(const nlohmann::json& json) {
  ConfigObject cfg(json, "$.model");
  return model::build_graph(model::ModelSpec::from_json(cfg), {});
}

constexpr bool kHost = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
}  // namespace

TEST_CASE("A convolution fuses with the max pool after it where that pays", "[model][passes]") {
  if (!kHost) TESSERA_SKIP("host-build", "the fusion is for host builds only");
  auto g = graph_of(spec(true));
  const size_t before = g.nodes.size();
  const auto lines = model::passes::fuse_conv_max_pool(g);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "graph: 'conv2+pool2' pools each slab of the convolution's output as it is computed (its full output is "
        "never stored)");
  REQUIRE(g.nodes.size() == before - 1);
  CHECK(g.nodes[1].layer->name() == "conv2+pool2");
  CHECK(g.nodes[1].layer->type() == "conv3d+max_pool3d");
  CHECK(g.nodes[1].global_output == Shape{1, 8, 32, 32, 16});
  CHECK(g.nodes[1].parameters.trainable == 16 * 27 * 4 + 16);
  CHECK(g.nodes[2].layer->name() == "conv3");
  CHECK(g.nodes[2].inputs == std::vector<int>{1});
  CHECK(g.nodes[3].layer->name() == "pool3");
  CHECK(g.nodes[3].inputs == std::vector<int>{2});
  CHECK(g.nodes[5].inputs == std::vector<int>{4});
}

TEST_CASE("The spec can turn the fusion off", "[model][passes]") {
  auto g = graph_of(spec(false));
  CHECK(model::passes::fuse_conv_max_pool(g).empty());
  CHECK(g.nodes[1].layer->name() == "conv2");
}

TEST_CASE("A fused model declares the same parameters in the same order", "[model][passes]") {
  // Checkpoints and gradient buckets depend on the names, shapes and order.
  const auto a = spec(true), b = spec(false);
  ConfigObject ca(a, "$.model"), cb(b, "$.model");
  const auto fused = model::Model::from_json(ca, {}), separate = model::Model::from_json(cb, {});
  if (kHost) CHECK(fused->num_layers() == separate->num_layers() - 1);
  const auto& pa = fused->parameters().all();
  const auto& pb = separate->parameters().all();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    CHECK(pa[i]->name == pb[i]->name);
    CHECK(pa[i]->shape == pb[i]->shape);
  }
  CHECK(fused->parameters().trainable_offsets() == separate->parameters().trainable_offsets());
  CHECK(fused->parameters().values().to_host() == separate->parameters().values().to_host());
}
