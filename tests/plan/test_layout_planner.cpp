#include <catch2/catch.hpp>

#include "support/published_profile.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <set>

#include "tessera/core/config.hpp"
#include "tessera/plan/block_shape.hpp"
#include "tessera/plan/layout_planner.hpp"

using namespace tessera;
using parallel::Distribution;

namespace {

const nlohmann::json kSmallNet = nlohmann::json::parse(R"({
  "input": {"channels": 4, "size": [16, 16, 16]},
  "layers": [
    {"name": "conv1", "type": "conv3d", "filters": 8, "kernel": 3, "padding": 1},
    {"name": "act1", "type": "relu"},
    {"name": "pool1", "type": "max_pool3d", "kernel": 2},
    {"name": "conv2", "type": "conv3d", "filters": 16, "kernel": 3, "padding": 1},
    {"name": "flatten", "type": "flatten"},
    {"name": "out", "type": "dense", "units": 4}
  ]})");

/// What a planner case asks: `batch` samples (the small net's 4 by default) on `ranks` ranks.
plan::PlanRequest small_request(int ranks, int64_t batch = 4) {
  plan::PlanRequest request;
  request.ranks = ranks;
  request.batch = batch;
  return request;
}

}  // namespace

TEST_CASE("block_shape splits samples, space and channels in shares, features over samples and channels only") {
  Distribution d;
  d.sample = 2;
  d.depth = 2;
  d.filter = 2;
  CHECK(plan::block_shape(Shape{4, 8, 6, 6, 8}, d) == Shape{2, 4, 6, 6, 4});
  CHECK(plan::block_shape(Shape{4, 32}, d) == Shape{2, 16});  // copies across the depth split
  CHECK(plan::block_shape(Shape{4, 7, 6, 6, 8}, d) == Shape{2, 4, 6, 6, 4});  // depth 7 over 2: 4 and 3
  CHECK_FALSE(plan::block_shape(Shape{4, 1, 6, 6, 8}, d));                     // depth 1 over 2
  CHECK(plan::block_shape(Shape{3, 8, 6, 6, 8}, d) == Shape{2, 4, 6, 6, 4});  // 3 samples over 2: 2 and 1
  CHECK_FALSE(plan::block_shape(Shape{1, 8, 6, 6, 8}, d));                     // 1 sample over 2
  CHECK_FALSE(plan::block_shape(Shape{4, 6, 6, 8}, d));       // a 2D activation cannot split depth
}

TEST_CASE("distributions_of lists every split of the ranks once") {
  for (int ranks : {1, 2, 4, 6, 8}) {
    const auto all = plan::distributions_of(ranks, 3, true);
    std::set<std::string> seen;
    for (const auto& d : all) {
      CHECK(d.ranks() == ranks);
      CHECK(seen.insert(d.str()).second);
    }
    const auto plain = plan::distributions_of(ranks, 0, false);
    REQUIRE(plain.size() == 1);
    CHECK(plain[0].sample == ranks);
  }
  // 2 ranks: sample, depth, height, width, channel, filter.
  CHECK(plan::distributions_of(2, 3, true).size() == 6);
  // 4 ranks without space: sample; channel, filter over 2 (and 2 samples); channel, filter and
  // the 2 x 2 grid over 4.
  std::set<std::string> four;
  for (const auto& d : plan::distributions_of(4, 0, true)) four.insert(d.str());
  CHECK(four == std::set<std::string>{"{sample 4}", "{sample 2, channel 2}", "{sample 2, filter 2}", "{channel 4}",
                                      "{filter 4}", "{channel 2, filter 2}"});
  CHECK(plan::distributions_of(2, 2, false).size() == 3);
}

TEST_CASE("the planned layout is the fastest of every layout the model accepts (brute force)") {
  const model::ModelSpec spec = test::spec_of(kSmallNet);
  plan::MachineProfile profile = test::published_profile();
  plan::PlanRequest request = small_request(2);
  request.min_gain = 0;  // the optimum itself, however close data parallelism comes
  const plan::Plan plan = plan::plan_model(spec, request, profile);
  REQUIRE(plan.chosen.valid);
  REQUIRE(plan.feasible);

  // Every combination of every layer's distributions, priced by the same model.
  const plan::PlanGraph graph = plan::plan_graph(spec, request.batch);
  plan::LayerTimer timer(profile, "auto", 1);
  plan::LayerCostModel costs(graph, profile, timer, plan::CostOptions{2, 1, 0, 0, 1});
  std::vector<std::vector<Distribution>> options;
  for (size_t i = 0; i < graph.nodes.size(); ++i) options.push_back(costs.candidates(i));
  double best = std::numeric_limits<double>::infinity();
  int valid = 0;
  std::vector<Distribution> layout(graph.nodes.size());
  std::function<void(size_t)> walk = [&](size_t i) {
    if (i == graph.nodes.size()) {
      const plan::LayoutPrediction p = plan::predict_layout(costs, layout, "any", 0, 0);
      if (p.valid && p.step_time < 1e29) {
        ++valid;
        best = std::min(best, p.step_time);
      }
      return;
    }
    for (const auto& d : options[i]) {
      layout[i] = d;
      walk(i + 1);
    }
  };
  walk(0);
  CHECK(valid > 100);
  CHECK(plan.chosen.step_time == Approx(best).epsilon(1e-9));
  for (const auto& r : plan.references)
    if (r.valid) CHECK(plan.chosen.step_time <= r.step_time * (1 + 1e-12));
  // The moved activation keeps its pool's distribution.
  CHECK(plan.chosen.layers[2].name == "act1");
  CHECK(plan.chosen.layers[2].distribution == plan.chosen.layers[1].distribution);
}

TEST_CASE("a memory limit below every layout gives the smallest one, marked as not fitting") {
  const model::ModelSpec spec = test::spec_of(kSmallNet);
  plan::MachineProfile profile = test::published_profile();
  plan::PlanRequest request = small_request(2);
  const plan::Plan free = plan::plan_model(spec, request, profile);
  request.memory_limit = 1024;
  const plan::Plan tight = plan::plan_model(spec, request, profile);
  CHECK_FALSE(tight.feasible);
  CHECK_FALSE(tight.chosen.fits);
  CHECK(tight.chosen.memory <= free.chosen.memory);
  CHECK(plan::plan_table(tight).find("no layout fits in") != std::string::npos);
}

TEST_CASE("apply_layout writes every layer's distribution and the model's (its input's)") {
  model::ModelSpec spec = test::spec_of(kSmallNet);
  plan::MachineProfile profile = test::published_profile();
  plan::PlanRequest request = small_request(2);
  const plan::Plan plan = plan::plan_model(spec, request, profile);
  plan::apply_layout(spec, plan.chosen);
  REQUIRE(spec.distribution);
  CHECK(*spec.distribution == plan.chosen.layers.front().distribution);
  for (const auto& l : spec.layers) {
    REQUIRE(l.distribution);
    CHECK(l.distribution->ranks() == 2);
  }
  // Predicting the written spec gives the plan back.
  const plan::LayoutPrediction again = plan::predict_model(spec, request, profile);
  CHECK(again.step_time == Approx(plan.chosen.step_time).epsilon(1e-9));
}

TEST_CASE("a layer no distribution of the ranks fits is refused naming it") {
  // 2 samples of 2^3 planes, and the first layer keeps whole channels: nothing splits in three.
  model::ModelSpec spec = test::spec_of(nlohmann::json::parse(R"({
    "input": {"channels": 4, "size": [2, 2, 2]},
    "layers": [
      {"name": "conv1", "type": "conv3d", "filters": 8, "kernel": 3, "padding": 1},
      {"name": "flatten", "type": "flatten"},
      {"name": "out", "type": "dense", "units": 4}
    ]})"));
  plan::MachineProfile profile = test::published_profile();
  plan::PlanRequest request = small_request(3, 2);
  CHECK_THROWS_WITH(plan::plan_model(spec, request, profile),
                    Catch::Contains("conv1") && Catch::Contains("runs under no distribution of 3 ranks"));
}

TEST_CASE("past 24 candidates a layer, the plan is no slower than any uniform layout the model runs") {
  // One sample over 8 ranks: every layer has dozens of distributions, so pruning is at work;
  // the kept sets must still hold the layouts whole runs of layers share.
  const model::ModelSpec spec = test::spec_of(nlohmann::json::parse(R"({
    "input": {"channels": 4, "size": [32, 32, 32]},
    "layers": [
      {"name": "conv1", "type": "conv3d", "filters": 16, "kernel": 3, "padding": 1},
      {"name": "act1", "type": "relu"},
      {"name": "pool1", "type": "max_pool3d", "kernel": 2},
      {"name": "conv2", "type": "conv3d", "filters": 32, "kernel": 3, "padding": 1},
      {"name": "act2", "type": "relu"},
      {"name": "pool2", "type": "max_pool3d", "kernel": 2},
      {"name": "conv3", "type": "conv3d", "filters": 64, "kernel": 3, "padding": 1},
      {"name": "flatten", "type": "flatten"},
      {"name": "out", "type": "dense", "units": 4}
    ]})"));
  plan::MachineProfile profile = test::published_profile();
  plan::PlanRequest request = small_request(8, 1);
  request.min_gain = 0;
  const plan::Plan plan = plan::plan_model(spec, request, profile);
  REQUIRE(plan.chosen.valid);

  const plan::PlanGraph graph = plan::plan_graph(spec, request.batch);
  plan::LayerTimer timer(profile, "auto", 1);
  plan::LayerCostModel costs(graph, profile, timer, plan::CostOptions{8, 1, 0, 0, 1});
  size_t most = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) most = std::max(most, costs.candidates(i).size());
  REQUIRE(most > 24);
  int uniform = 0;
  for (const auto& d : plan::distributions_of(8, 3, true)) {
    const std::vector<Distribution> layout(graph.nodes.size(), d);
    const plan::LayoutPrediction p = plan::predict_layout(costs, layout, d.str(), 0, 0);
    if (!p.valid || p.step_time >= 1e29) continue;
    ++uniform;
    INFO("uniform layout " << d.str());
    CHECK(plan.chosen.step_time <= p.step_time * (1 + 1e-12));
  }
  CHECK(uniform >= 3);
}

TEST_CASE("a model no layout of the ranks can run is refused naming the move it cannot make") {
  // Two samples on 4 ranks: the 1x1 maps after the pool do not split in space, so those layers
  // split by channel; the classifier keeps whole channels, and features do not move from a
  // channel split to a spatial one.
  const model::ModelSpec spec = test::spec_of(nlohmann::json::parse(R"({
    "input": {"channels": 3, "size": [2, 2]},
    "layers": [
      {"name": "conv1", "type": "conv2d", "filters": 8, "kernel": 3, "padding": 1},
      {"name": "pool1", "type": "max_pool2d", "kernel": 2},
      {"name": "conv2", "type": "conv2d", "filters": 8, "kernel": 3, "padding": 1},
      {"name": "gap", "type": "global_avg_pool2d"},
      {"name": "classifier", "type": "dense", "units": 4}
    ]})"));
  plan::MachineProfile profile = test::published_profile();
  plan::PlanRequest request = small_request(4, 2);
  const plan::Plan plan = plan::plan_model(spec, request, profile);
  CHECK_FALSE(plan.chosen.valid);
  CHECK_FALSE(plan.feasible);
  CHECK_THAT(plan.chosen.why, Catch::Contains("no layout of 4 ranks with global batch 2") &&
                                  Catch::Contains("features") && Catch::Contains("fewer ranks or a larger batch"));
}

TEST_CASE("data parallelism is kept unless the fastest layout is predicted faster by min_gain") {
  const model::ModelSpec spec = test::spec_of(kSmallNet);
  plan::MachineProfile profile = test::published_profile();
  // A slow all-reduce: splitting the weights by channel or filter halves what it sums.
  profile.within_node[plan::Collective::allreduce] = plan::LinkCost{2e-6, 1e-7};
  plan::PlanRequest request = small_request(2);
  request.min_gain = 0;
  const plan::Plan best = plan::plan_model(spec, request, profile);
  REQUIRE(best.chosen.valid);
  const plan::LayoutPrediction& data_parallel = best.references.front();
  REQUIRE(data_parallel.label == "data parallel");
  const double gain = 1 - best.chosen.step_time / data_parallel.step_time;
  REQUIRE(gain > 0);  // with gradients this dear, channel splits pay (else the case proves nothing)
  CHECK(best.fastest_found == 0);

  // A bar above the gain keeps data parallelism and says what was found.
  request.min_gain = std::min(1.0, gain * 2);
  const plan::Plan kept = plan::plan_model(spec, request, profile);
  CHECK(kept.chosen.label == "planned");
  CHECK(kept.chosen.step_time == data_parallel.step_time);
  for (const auto& l : kept.chosen.layers) CHECK(l.distribution.sample == 2);
  CHECK(kept.fastest_found == best.chosen.step_time);
  CHECK(plan::plan_table(kept).find("data parallelism kept: the fastest layout found") != std::string::npos);

  // A bar below it takes the faster layout.
  request.min_gain = gain / 2;
  CHECK(plan::plan_model(spec, request, profile).chosen.step_time == best.chosen.step_time);
}

TEST_CASE("where skip connections leave too many combinations, the planner keeps fewer candidates") {
  // The example U-Net on 16 ranks with 2 samples: its two skip connections keep their outputs
  // alive across the decoder, and 24 candidates each are more than 2^20 combinations.
  nlohmann::json config;
  std::ifstream(std::string(TESSERA_SOURCE_DIR) + "/examples/unet3d/unet3d_cells.json") >> config;
  const model::ModelSpec spec = test::spec_of(config.at("model"));
  plan::MachineProfile profile = test::published_profile();
  plan::PlanRequest request = small_request(16, 2);
  const plan::Plan plan = plan::plan_model(spec, request, profile);
  REQUIRE(plan.chosen.valid);
  CHECK(plan.kept < 24);
  CHECK(plan.kept >= 3);
  CHECK(plan::plan_table(plan).find("it kept " + std::to_string(plan.kept)) != std::string::npos);
  // Per-voxel output: the classifier keeps the input's distribution.
  CHECK(plan.chosen.layers.back().distribution == plan.chosen.layers.front().distribution);
}

TEST_CASE("channel groups that would span nodes are not planned, and a given one is refused naming the nodes") {
  const model::ModelSpec spec = test::spec_of(kSmallNet);
  plan::MachineProfile profile = test::published_profile();
  const plan::PlanGraph graph = plan::plan_graph(spec, 4);
  plan::LayerTimer timer(profile, "auto", 1);
  const size_t conv2 = 3;
  REQUIRE(graph.nodes[conv2].name == "conv2");
  Distribution filter2;
  filter2.filter = 2;
  const auto has_channel_split = [](const std::vector<Distribution>& ds) {
    return std::any_of(ds.begin(), ds.end(), [](const Distribution& d) { return d.splits_channels(); });
  };
  SECTION("one rank per node: no pair of ranks shares a node") {
    profile.ranks_per_node = 1;
    profile.across_nodes = profile.within_node;  // a plan for 2 ranks now prices links across nodes
    plan::LayerCostModel costs(graph, profile, timer, plan::CostOptions{2, 1, 0, 0, 1});
    CHECK_FALSE(has_channel_split(costs.candidates(conv2)));
    const auto why = costs.refusal(conv2, filter2);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Contains("channel groups of 2 ranks would span nodes") &&
                         Catch::Contains("1 rank(s) per node"));
    plan::PlanRequest request = small_request(2);
    request.min_gain = 0;
    const plan::Plan plan = plan::plan_model(spec, request, profile);
    for (const auto& l : plan.chosen.layers) CHECK_FALSE(l.distribution.splits_channels());
  }
  SECTION("two ranks per node: pairs fit, and so do plans inside one node") {
    profile.ranks_per_node = 2;
    plan::LayerCostModel four(graph, profile, timer, plan::CostOptions{4, 1, 0, 0, 1});
    CHECK(has_channel_split(four.candidates(conv2)));
    Distribution filter4;
    filter4.filter = 4;
    CHECK(four.refusal(conv2, filter4));
    plan::LayerCostModel two(graph, profile, timer, plan::CostOptions{2, 1, 0, 0, 1});
    CHECK_FALSE(two.refusal(conv2, filter2));
  }
}

TEST_CASE("nodes of different speeds: the plan shares the batch in proportion to them where it pays") {
  const model::ModelSpec spec = test::spec_of(kSmallNet);
  plan::MachineProfile profile = test::published_profile();
  profile.ranks_per_node = 1;
  profile.across_nodes = profile.within_node;
  const plan::PlanRequest request = small_request(2, 12);
  CHECK(plan::plan_model(spec, request, profile).balance.empty());  // all nodes alike

  profile.node_kinds = {{"fast", 1, 1.0}, {"slow", 1, 0.5}};
  CHECK(profile.rank_speeds(2) == std::vector<double>{1.0, 0.5});
  const plan::Plan balanced = plan::plan_model(spec, request, profile);
  CHECK(balanced.balance == std::vector<int64_t>{666667, 333333});
  CHECK(plan::plan_json(balanced).at("balance") == nlohmann::json({666667, 333333}));
  CHECK_THAT(plan::plan_table(balanced), Catch::Contains("shared in proportion to them (8/4 of 12"));
  // Asked for a gain it cannot give, the plan keeps even shares, which run at the slow node's
  // pace: its compute takes longer.
  plan::PlanRequest strict = request;
  strict.min_gain = 0.9;
  const plan::Plan even = plan::plan_model(spec, strict, profile);
  CHECK(even.balance.empty());
  CHECK(plan::plan_json(even).at("balance") == "even");
  CHECK(balanced.chosen.compute < even.chosen.compute * 0.8);

  const auto read = plan::MachineProfile::from_json(profile.to_json(), "profile");
  REQUIRE(read.node_kinds.size() == 2);
  CHECK(read.node_kinds[1].name == "slow");
  CHECK(read.node_kinds[1].speed == 0.5);
  profile.node_kinds = {{"one", 1, 1.0}};
  CHECK_THROWS_WITH(profile.rank_speeds(2), Catch::Contains("node_kinds") && Catch::Contains("its nodes hold 1 ranks"));
}
