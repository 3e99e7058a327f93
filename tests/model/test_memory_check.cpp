// The check that refuses, before allocating, a training run that cannot fit in memory.
#include <catch2/catch.hpp>

#include "tessera/core/memory_capacity.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/memory_check.hpp"
#include "tessera/model/model_spec.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

model::Graph graph_of(const std::string& text) {
  const json spec = json::parse(text);  // the reader refers to it while the spec is read
  ConfigObject cfg(spec, "$.model");
  return model::build_graph(model::ModelSpec::from_json(cfg), {});
}

const char* kNet = R"({"input": {"channels": 2, "size": [8, 8, 8]},
    "layers": [{"name": "c1", "type": "conv3d", "filters": 4, "padding": 1},
               {"name": "wide", "type": "conv3d", "filters": 64, "padding": 1},
               {"type": "flatten"}, {"name": "head", "type": "dense", "units": 3}]})";

}  // namespace

TEST_CASE("Training memory counts outputs and parameters with their gradients", "[model][memory]") {
  const model::Graph g = graph_of(kNet);
  const auto need = model::training_memory_need(g, 2);
  const int64_t c1 = 2 * (2 * 8 * 8 * 8 * 4) * 4 + 2 * (4 * 27 * 2 + 4) * 4;
  const int64_t wide = 2 * (2 * 8 * 8 * 8 * 64) * 4 + 2 * (64 * 27 * 4 + 64) * 4;
  const int64_t flatten = 2 * (2 * 8 * 8 * 8 * 64) * 4;
  const int64_t head = 2 * (2 * 3) * 4 + 2 * (3 * 32768 + 3) * 4;
  CHECK(need.bytes == c1 + wide + flatten + head);
  CHECK(g.nodes[need.largest_node].layer->name() == "head");  // 786 KB of weights and gradients
}

TEST_CASE("A run that cannot fit is refused with the layer's path, its shape and the batch key", "[model][memory]") {
  const model::Graph g = graph_of(kNet);
  const int64_t need = model::training_memory_need(g, 16).bytes;
  CHECK_NOTHROW(model::require_training_fits(g, 16, "$.training.batch_size", need, "test capacity"));
  CHECK_THROWS_WITH(model::require_training_fits(g, 16, "$.training.batch_size", need - 1, "physical memory 4.0 MiB"),
                    Catch::Contains("$.model.layers[1]: training needs at least") &&
                        Catch::Contains("at a batch of 16 ($.training.batch_size), but a rank here has") &&
                        Catch::Contains("(physical memory 4.0 MiB)") &&
                        Catch::Contains("layer 'wide' (conv3d) with output [16, 8, 8, 8, 64] and 6976 parameters"));
}

TEST_CASE("A layer too large for any machine is refused while the graph is built, naming the layer",
          "[model][memory]") {
  // Extents are bounded (ops/conv.cpp) so that no size computed from them can leave int64:
  // the memory check never sees a count it could not add up.
  CHECK_THROWS_WITH(graph_of(R"({"input": {"channels": 4, "size": [4096, 4096, 4096]},
      "layers": [{"name": "huge", "type": "conv3d", "filters": 1000000000, "padding": 1}]})"),
                    Catch::Contains("$.model.layers[0].filters: expected an integer from 1 to 1048576, got 1000000000"));
}

TEST_CASE("Capacity is split between the ranks that share it", "[model][memory]") {
  const MemoryCapacity host{1000, "physical memory", 0};
  CHECK(host.per_rank(1) == 1000);
  CHECK(host.per_rank(4) == 250);
  const MemoryCapacity gpus{1000, "GPU memory", 4};
  CHECK(gpus.per_rank(4) == 1000);  // one device each
  CHECK(gpus.per_rank(8) == 500);   // two ranks per device
  CHECK(memory_capacity().bytes > (int64_t{64} << 20));
  CHECK(human_bytes(1536.0 * 1024 * 1024) == "1.5 GiB");
  CHECK(human_bytes(512) == "512 B");
}
