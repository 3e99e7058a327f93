#include <catch2/catch.hpp>

#include <algorithm>

#include "support/published_profile.hpp"

#include "tessera/core/config.hpp"
#include "tessera/layers/haloed_input.hpp"
#include "tessera/parallel/halo_plan.hpp"
#include "tessera/plan/layout_planner.hpp"

using namespace tessera;
using parallel::Distribution;

namespace {

// conv1 reads the model input (no input gradient: its halo goes forward only); conv2 reads
// pool1's output (8^3 x 8 channels), so its halo's gradient goes back too.
const nlohmann::json kNet = nlohmann::json::parse(R"({
  "input": {"channels": 4, "size": [16, 16, 16]},
  "layers": [
    {"name": "conv1", "type": "conv3d", "filters": 8, "kernel": 3, "padding": 1},
    {"name": "act1", "type": "relu"},
    {"name": "pool1", "type": "max_pool3d", "kernel": 2},
    {"name": "conv2", "type": "conv3d", "filters": 8, "kernel": 5, "padding": 2},
    {"name": "flatten", "type": "flatten"},
    {"name": "out", "type": "dense", "units": 4}
  ]})");

size_t node_named(const plan::PlanGraph& graph, const std::string& name) {
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].name == name) return i;
  FAIL("no node " << name);
  return 0;
}

Distribution split(int depth, int height, int width) {
  Distribution d;
  d.depth = depth, d.height = height, d.width = width;
  return d;
}

}  // namespace

TEST_CASE("The cost model's halo bytes are those of the layer's HaloPlan", "[plan]") {
  const plan::PlanGraph graph = plan::plan_graph(test::spec_of(kNet), 4);
  plan::MachineProfile profile = test::published_profile();
  plan::LayerTimer timer(profile, "auto", 1);
  const size_t conv1 = node_named(graph, "conv1"), conv2 = node_named(graph, "conv2");

  for (const Distribution& d : {split(2, 1, 1), split(1, 2, 2), split(2, 2, 2), split(4, 1, 1), split(1, 1, 4)}) {
    INFO(d.str());
    plan::LayerCostModel costs(graph, profile, timer, plan::CostOptions{d.ranks(), 1, 0, 0, 1});
    // The plans of the rank with the most neighbours, built here from the blocks and windows.
    const std::array<int, 3> busiest{std::min(1, d.depth - 1), std::min(1, d.height - 1), std::min(1, d.width - 1)};
    const std::array<int, 3> parts{d.depth, d.height, d.width};
    const Shape block1{4, 16 / d.depth, 16 / d.height, 16 / d.width, 4};
    layers::Window w1;
    w1.kernel = {3, 3, 3}, w1.padding = {1, 1, 1};
    const parallel::HaloPlan plan1(d, busiest, block1,
                                   layers::halo_widths(parts, {16, 16, 16}, parallel::SpatialAlignment(), w1, "conv1"),
                                   "conv1");
    const Shape block2{4, 8 / d.depth, 8 / d.height, 8 / d.width, 8};
    layers::Window w2;
    w2.kernel = {5, 5, 5}, w2.padding = {2, 2, 2};
    const parallel::HaloPlan plan2(
        d, busiest, block2, layers::halo_widths(parts, {8, 8, 8}, parallel::SpatialAlignment(), w2, "conv2"), "conv2");

    const plan::LayerCost c1 = costs.layer_cost(conv1, d);
    CHECK(c1.halo_bytes == static_cast<double>(plan1.bytes_sent()));
    const plan::LayerCost c2 = costs.layer_cost(conv2, d);
    CHECK(c2.halo_bytes == static_cast<double>(plan2.bytes_sent() + plan2.bytes_received()));
    CHECK(c1.halo > 0);
    CHECK(c2.halo > 0);
    REQUIRE(costs.halo_plan(conv2, d));
    CHECK(costs.halo_plan(conv2, d)->sends().size() == plan2.sends().size());
    // Layers without a window exchange no halo.
    CHECK(costs.layer_cost(node_named(graph, "act1"), d).halo_bytes == 0);
  }

  // By hand: conv2 over depth 2 sends its 2 depth rows next to the neighbour (4 samples, 8 x 8,
  // 8 channels) and gets as many back; over 2 x 2 x 2 the corner block of 4^3 sends 2-wide
  // slabs: 3 faces of 2 x 4 x 4, 3 edges of 2 x 2 x 4 and a corner of 2^3 (and as many back).
  plan::LayerCostModel two(graph, profile, timer, plan::CostOptions{2, 1, 0, 0, 1});
  CHECK(two.layer_cost(conv2, split(2, 1, 1)).halo_bytes == 2.0 * (2 * 8 * 8) * 4 * 8 * 4);
  plan::LayerCostModel eight(graph, profile, timer, plan::CostOptions{8, 1, 0, 0, 1});
  CHECK(eight.layer_cost(conv2, split(2, 2, 2)).halo_bytes == 2.0 * (3 * 32 + 3 * 16 + 8) * 4 * 8 * 4);
  // More split axes price more messages: edges and corners are sent too.
  CHECK(eight.layer_cost(conv2, split(2, 2, 2)).halo > two.layer_cost(conv2, split(2, 1, 1)).halo);
}

TEST_CASE("The cost model refuses a halo wider than the neighbouring block, as the layer does", "[plan]") {
  const plan::PlanGraph graph = plan::plan_graph(test::spec_of(kNet), 4);
  plan::MachineProfile profile = test::published_profile();
  plan::LayerTimer timer(profile, "auto", 1);
  plan::LayerCostModel costs(graph, profile, timer, plan::CostOptions{8, 1, 0, 0, 1});
  // conv2's input depth of 8 over 8 ranks: blocks of 1, a halo of 2.
  const auto why = costs.refusal(node_named(graph, "conv2"), split(8, 1, 1));
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("conv2: cannot split depth over 8 ranks"));
  CHECK_THAT(*why, Catch::Contains("rank 0's inputs [0, 1) are narrower than the halo its neighbours need (depth 2+2"));
  CHECK_FALSE(costs.refusal(node_named(graph, "conv1"), split(8, 1, 1)));
}

TEST_CASE("A bf16 plan prices activations, halos and channel gathers at two bytes, gradient sums as asked",
          "[plan][precision]") {
  const plan::PlanGraph g32 = plan::plan_graph(test::spec_of(kNet), 4);
  const plan::PlanGraph g16 = plan::plan_graph(test::spec_of(kNet), 4, ElementType::bf16);
  const size_t conv2 = node_named(g16, "conv2");
  CHECK(g32.nodes[conv2].precision == ElementType::fp32);
  CHECK(g16.nodes[conv2].precision == ElementType::bf16);
  CHECK(g16.nodes[node_named(g16, "flatten")].precision == ElementType::fp32);  // flatten stays fp32
  plan::MachineProfile profile = test::published_profile();
  plan::LayerTimer timer(profile, "auto", 1);
  const Distribution d = split(2, 1, 1);
  plan::LayerCostModel c32(g32, profile, timer, plan::CostOptions{2, 1, 0, 0, 1});
  plan::LayerCostModel c16(g16, profile, timer, plan::CostOptions{2, 1, 0, 0, 1});
  // Halos: half the bytes, and no slower (the wire takes fewer bytes).
  const plan::LayerCost h32 = c32.layer_cost(conv2, d), h16 = c16.layer_cost(conv2, d);
  CHECK(h16.halo_bytes * 2 == h32.halo_bytes);
  CHECK(h16.halo <= h32.halo);
  // A channel split gathers bf16 inputs: cheaper than fp32's.
  Distribution filter;
  filter.filter = 2;
  CHECK(c16.layer_cost(conv2, filter).channel_exchange < c32.layer_cost(conv2, filter).channel_exchange);
  // Gradient sums follow the gradient precision alone.
  plan::CostOptions sums16{2, 1, 0, 0, 1};
  sums16.gradient_precision = ElementType::bf16;
  plan::LayerCostModel g16_sums(g32, profile, timer, sums16);
  Distribution samples;
  samples.sample = 2;
  CHECK(g16_sums.layer_cost(conv2, samples).gradient < c32.layer_cost(conv2, samples).gradient);
  CHECK(c16.layer_cost(conv2, samples).gradient == c32.layer_cost(conv2, samples).gradient);
}

TEST_CASE("The cost model weighs extents the ranks do not divide, strided windows in units of their stride",
          "[plan]") {
  const plan::PlanGraph graph = plan::plan_graph(test::spec_of(kNet), 4);
  plan::MachineProfile profile = test::published_profile();
  plan::LayerTimer timer(profile, "auto", 1);
  plan::LayerCostModel costs(graph, profile, timer, plan::CostOptions{3, 1, 0, 0, 1});
  // 16 planes over 3 ranks: conv1 cut plane by plane (5/6/5), pool1 16 → 8 in units of 2
  // (6/4/6 → 3/2/3), conv2 on 8 planes (3/2/3) with a halo of 2.
  for (const char* layer : {"conv1", "pool1", "conv2"}) {
    INFO(layer);
    CHECK_FALSE(costs.refusal(node_named(graph, layer), split(3, 1, 1)));
    CHECK(costs.layer_cost(node_named(graph, layer), split(3, 1, 1)).compute > 0);
  }
  CHECK(costs.layer_cost(node_named(graph, "conv2"), split(3, 1, 1)).halo_bytes > 0);
  // Over 6 ranks conv2's 8 planes give blocks of 1 and 2, narrower than its halo of 2.
  plan::LayerCostModel six(graph, profile, timer, plan::CostOptions{6, 1, 0, 0, 1});
  const auto why = six.refusal(node_named(graph, "conv2"), split(6, 1, 1));
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("are narrower than the halo"));
}

TEST_CASE("The cost model weighs a 2-D channel x filter split: exchanges over rows and columns", "[plan]") {
  const plan::PlanGraph graph = plan::plan_graph(test::spec_of(kNet), 4);
  plan::MachineProfile profile = test::published_profile();
  plan::LayerTimer timer(profile, "auto", 1);
  plan::LayerCostModel costs(graph, profile, timer, plan::CostOptions{4, 1, 0, 0, 1});
  Distribution grid, filter;
  grid.channel = grid.filter = 2;
  filter.filter = 4;
  const size_t conv2 = node_named(graph, "conv2");
  REQUIRE_FALSE(costs.refusal(conv2, grid));
  const auto candidates = costs.candidates(conv2);
  CHECK(std::any_of(candidates.begin(), candidates.end(), [&](const Distribution& d) { return d == grid; }));
  const plan::LayerCost g = costs.layer_cost(conv2, grid), f = costs.layer_cost(conv2, filter);
  // Timed on its own op (half the filters from half the input) and priced by its own
  // collectives (over 2 ranks each, not 4).
  CHECK(g.compute > 0);
  CHECK(g.channel_exchange > 0);
  CHECK(g.channel_exchange != f.channel_exchange);
}

TEST_CASE("A convolution that overlaps its forward halo exchange hides it behind its interior", "[plan]") {
  // A batch of 8: conv1's block then has the work overlap needs (HaloOverlappedConv::min_flops).
  const plan::PlanGraph graph = plan::plan_graph(test::spec_of(kNet), 8);
  plan::MachineProfile profile = test::published_profile();
  plan::LayerTimer timer(profile, "auto", 1);
  const size_t conv1 = node_named(graph, "conv1"), conv2 = node_named(graph, "conv2");
  const auto model = [&](layers::HaloOverlap mode, int ranks) {
    plan::CostOptions options{ranks, 1, 0, 0, 1};
    options.halo_overlap = mode;
    return plan::LayerCostModel(graph, profile, timer, options);
  };
  // A depth split: conv1's block is 8 deep with a halo of 1 each side, so 6 of 8 output planes
  // need no halo; conv2 (kernel 5) on a block 4 deep has none.
  const Distribution depth = split(2, 1, 1);
  auto off = model(layers::HaloOverlap::off, 2), pays = model(layers::HaloOverlap::where_it_pays, 2);
  const auto plan1 = pays.halo_plan(conv1, depth), plan2 = pays.halo_plan(conv2, depth);
  REQUIRE(plan1);
  REQUIRE(plan2);
  CHECK(off.overlapped_share(conv1, depth, *plan1) == 0);
  CHECK(pays.overlapped_share(conv1, depth, *plan1) == Approx(0.75));
  CHECK(pays.overlapped_share(conv2, depth, *plan2) == 0);
  CHECK(model(layers::HaloOverlap::always, 2).overlapped_share(conv2, depth, *plan2) == 0);
  // The forward messages hide behind the interior; the backward ones (none for conv1: it reads
  // the model input) and the copies stay.
  const plan::LayerCost hidden = pays.layer_cost(conv1, depth), exchanged = off.layer_cost(conv1, depth);
  CHECK(hidden.compute == exchanged.compute);
  CHECK(hidden.halo < exchanged.halo);
  CHECK(hidden.halo >= pays.halo_copy_seconds(*plan1, ElementType::fp32) * 0.999);
  CHECK(pays.layer_cost(conv2, depth).halo == off.layer_cost(conv2, depth).halo);

  // Halos along two axes would need buffers: only "always" overlaps them.
  const Distribution two_axes = split(1, 2, 2);
  auto pays4 = model(layers::HaloOverlap::where_it_pays, 4), always4 = model(layers::HaloOverlap::always, 4);
  const auto plan4 = pays4.halo_plan(conv1, two_axes);
  REQUIRE(plan4);
  CHECK(pays4.overlapped_share(conv1, two_axes, *plan4) == 0);
  CHECK(always4.overlapped_share(conv1, two_axes, *plan4) == Approx(6.0 / 8 * 6.0 / 8));
  CHECK(always4.layer_cost(conv1, two_axes).halo < pays4.layer_cost(conv1, two_axes).halo);
}
