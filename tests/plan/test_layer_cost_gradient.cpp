#include <catch2/catch.hpp>

#include "support/published_profile.hpp"

#include "tessera/plan/layer_cost.hpp"
#include "tessera/plan/layer_timer.hpp"
#include "tessera/plan/plan_graph.hpp"

using namespace tessera;

namespace {

// Four layers with weights, together far below one 4 MiB bucket.
const nlohmann::json kNet = nlohmann::json::parse(R"({
  "input": {"channels": 2, "size": [8, 8, 8]},
  "layers": [
    {"name": "conv1", "type": "conv3d", "filters": 8, "kernel": 3, "padding": 1},
    {"name": "conv2", "type": "conv3d", "filters": 8, "kernel": 3, "padding": 1},
    {"name": "flatten", "type": "flatten"},
    {"name": "fc1", "type": "dense", "units": 16},
    {"name": "out", "type": "dense", "units": 4}
  ]})");

}  // namespace

TEST_CASE("Layers summed in one gradient bucket share its allreduce latency instead of paying one each",
          "[plan][gradient]") {
  const plan::PlanGraph graph = plan::plan_graph(test::spec_of(kNet), 64);
  plan::MachineProfile profile = test::published_profile();
  plan::LayerTimer timer(profile, "auto", 1);
  parallel::Distribution data;
  data.sample = 64;
  const auto total = [&](double bucket_bytes) {
    plan::CostOptions o{64, 1, 0, 0, 1};
    o.gradient_bucket_bytes = bucket_bytes;
    plan::LayerCostModel costs(graph, profile, timer, o);
    double seconds = 0, bytes = 0;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      seconds += costs.layer_cost(i, data).gradient;
      bytes += costs.gradient_bytes(i, data);
    }
    return std::make_pair(seconds, bytes);
  };
  const auto [one_bucket, bytes] = total(4 << 20);
  // One bucket: the allreduce of the whole gradient, one set of latencies.
  CHECK(one_bucket == Approx(profile.collective_seconds(plan::Collective::allreduce, 64, bytes)));
  // A bucket per byte: every layer pays its own latencies, as before buckets were priced.
  const auto [per_layer, same_bytes] = total(1);
  double separate = 0;
  plan::LayerCostModel costs(graph, profile, timer, plan::CostOptions{64, 1, 0, 0, 1});
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    separate += profile.collective_seconds(plan::Collective::allreduce, 64, costs.gradient_bytes(i, data));
  CHECK(per_layer == Approx(separate));
  CHECK(per_layer > one_bucket);
  CHECK(same_bytes == bytes);
}
