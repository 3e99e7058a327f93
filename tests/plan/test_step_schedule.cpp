#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <tuple>

#include "support/published_profile.hpp"

#include "tessera/plan/layout_planner.hpp"
#include "tessera/plan/population_schedule.hpp"
#include "tessera/plan/step_schedule.hpp"

using namespace tessera;
using parallel::Distribution;
using plan::ScheduleOp;

namespace {

// Batch norm (statistics summed over a sample's ranks), windows with halos both ways, a
// flatten that gathers a sample's blocks, and dense layers with weights to sum.
const nlohmann::json kNet = nlohmann::json::parse(R"({
  "input": {"channels": 4, "size": [16, 16, 16]},
  "layers": [
    {"name": "conv1", "type": "conv3d", "filters": 8, "kernel": 3, "padding": 1},
    {"name": "bn1", "type": "batch_norm"},
    {"name": "act1", "type": "relu"},
    {"name": "pool1", "type": "max_pool3d", "kernel": 2},
    {"name": "conv2", "type": "conv3d", "filters": 8, "kernel": 5, "padding": 2},
    {"name": "flatten", "type": "flatten"},
    {"name": "fc1", "type": "dense", "units": 16},
    {"name": "out", "type": "dense", "units": 4}
  ]})");

Distribution dist(int sample, int depth = 1, int height = 1, int width = 1) {
  Distribution d;
  d.sample = sample, d.depth = depth, d.height = height, d.width = width;
  return d;
}

struct Fixture {
  plan::PlanGraph graph = plan::plan_graph(test::spec_of(kNet), 8);
  plan::MachineProfile profile = test::published_profile();
  plan::LayerTimer timer{profile, "auto", 1};

  size_t node(const std::string& name) const {
    for (size_t i = 0; i < graph.nodes.size(); ++i)
      if (graph.nodes[i].name == name) return i;
    FAIL("no node " << name);
    return 0;
  }
};

using GroupKey = std::tuple<int, int, int>;

/// What must hold for the simulator not to wait forever: every message one rank sends another
/// in exchanges the other receives from it as often; every member of a group runs the same
/// collectives on it, in the same order, with the same bytes.
void check_ranks_agree(const plan::StepSchedule& s) {
  std::map<std::pair<int, int>, int> sent, received;
  std::map<GroupKey, std::map<int, std::vector<std::pair<int, double>>>> calls;  // group -> member -> (kind, bytes)
  for (int r = 0; r < s.ranks(); ++r)
    for (const ScheduleOp& op : s.rank_ops(r)) {
      for (const auto& [peer, bytes] : op.sends) {
        CHECK(peer != r);
        CHECK(bytes > 0);
        ++sent[{r, peer}];
      }
      for (const int from : op.receives) ++received[{from, r}];
      if (op.kind == ScheduleOp::Kind::compute || op.kind == ScheduleOp::Kind::exchange ||
          op.kind == ScheduleOp::Kind::wait_all)
        continue;
      const plan::RankGroup& g = op.group;
      const int offset = r - g.first;
      REQUIRE(g.count >= 1);
      REQUIRE(offset % g.stride == 0);
      REQUIRE(offset / g.stride < g.count);
      REQUIRE(g.first + g.stride * (g.count - 1) < s.ranks());
      calls[{g.first, g.stride, g.count}][r].emplace_back(static_cast<int>(op.kind), op.bytes);
    }
  CHECK(sent == received);
  for (const auto& [group, members] : calls) {
    INFO("group first " << std::get<0>(group) << " stride " << std::get<1>(group) << " count " << std::get<2>(group));
    CHECK(static_cast<int>(members.size()) == std::get<2>(group));
    for (const auto& [member, list] : members) CHECK(list == members.begin()->second);
  }
}

double total(const std::vector<ScheduleOp>& ops, ScheduleOp::Kind kind) {
  double sum = 0;
  for (const auto& op : ops)
    if (op.kind == kind) sum += kind == ScheduleOp::Kind::compute ? op.seconds : op.bytes;
  return sum;
}

}  // namespace

TEST_CASE("A data-parallel step schedule computes what the plan predicts and sums every gradient behind backward",
          "[plan][schedule]") {
  Fixture f;
  plan::LayerCostModel costs(f.graph, f.profile, f.timer, plan::CostOptions{4, 1, 0, 0, 1});
  const auto layout = plan::predict_layout(costs, std::vector<Distribution>(f.graph.nodes.size(), dist(4)), "data", 0, 0);
  REQUIRE(layout.valid);
  const plan::StepSchedule schedule(costs, layout, 1e12, 4);
  check_ranks_agree(schedule);
  double gradient = 0;
  for (size_t i = 0; i < f.graph.nodes.size(); ++i) gradient += costs.gradient_bytes(i, dist(4));
  for (int r = 0; r < 4; ++r) {
    const auto ops = schedule.rank_ops(r);
    // No halo, no redistribution: every second of the plan's compute (layers, fused pool,
    // optimizer) is a compute phase, and its communication is the gradient sum alone.
    CHECK(total(ops, ScheduleOp::Kind::compute) == Approx(layout.compute).epsilon(1e-12));
    CHECK(total(ops, ScheduleOp::Kind::allreduce_start) == Approx(gradient).epsilon(1e-12));
    CHECK(total(ops, ScheduleOp::Kind::exchange) == 0);
    // One bucket (the buffer fits), started after the first layer's backward, waited for before
    // the optimizer's step, which ends the step.
    REQUIRE(ops.size() >= 3);
    CHECK(ops[ops.size() - 3].kind == ScheduleOp::Kind::allreduce_start);
    CHECK(ops[ops.size() - 2].kind == ScheduleOp::Kind::wait_all);
    CHECK(ops.back().kind == ScheduleOp::Kind::compute);
    CHECK(ops.back().layer == -1);
  }
  // Small buckets: each trainable layer its own, the last layers' started first, before the
  // backward of the layers in front of them.
  const plan::StepSchedule buckets(costs, layout, 1, 4);
  const auto ops = buckets.rank_ops(0);
  std::vector<int> started;
  for (const auto& op : ops)
    if (op.kind == ScheduleOp::Kind::allreduce_start) started.push_back(op.layer);
  CHECK(started.size() == 5);  // out, fc1, conv2, bn1, conv1
  CHECK(total(ops, ScheduleOp::Kind::allreduce_start) == Approx(gradient).epsilon(1e-12));
  CHECK(started.front() == static_cast<int>(f.node("fc1")));  // out's bucket, before fc1's backward
}

TEST_CASE("A spatial step schedule sends each rank's own halo boxes to its neighbours, as the plan counts them",
          "[plan][schedule]") {
  Fixture f;
  const Distribution d = dist(2, 2, 2, 1);
  plan::LayerCostModel costs(f.graph, f.profile, f.timer, plan::CostOptions{8, 1, 0, 0, 1});
  const auto layout = plan::predict_layout(costs, std::vector<Distribution>(f.graph.nodes.size(), d), "spatial", 0, 0);
  REQUIRE(layout.valid);
  const plan::StepSchedule schedule(costs, layout, 4 << 20, 4);
  check_ranks_agree(schedule);

  const int conv2 = static_cast<int>(f.node("conv2"));
  // The busiest rank of {depth 2, height 2} is (1, 1): sample group 0's last spatial rank, 3.
  // Its messages of conv2, forward and back, are the plan's halo bytes.
  double conv2_bytes = 0;
  int conv2_exchanges = 0;
  for (const auto& op : schedule.rank_ops(3))
    if (op.kind == ScheduleOp::Kind::exchange && op.layer == conv2) {
      ++conv2_exchanges;
      for (const auto& [peer, bytes] : op.sends) {
        CHECK(peer < 4);  // its own sample group's ranks
        conv2_bytes += bytes;
      }
    }
  CHECK(conv2_exchanges == 2);
  CHECK(conv2_bytes == costs.layer_cost(static_cast<size_t>(conv2), d).halo_bytes);

  // Batch norm sums its statistics over the sample's 4 ranks, forward and backward; flatten
  // gathers the sample's blocks there; gradients are summed over all 8.
  int stats = 0, gathers = 0, sums = 0;
  for (const auto& op : schedule.rank_ops(5)) {  // sample group 1
    if (op.kind == ScheduleOp::Kind::allreduce && op.layer == static_cast<int>(f.node("bn1"))) {
      ++stats;
      CHECK(op.group == plan::RankGroup{4, 1, 4});
    }
    if (op.kind == ScheduleOp::Kind::allgather && op.layer == static_cast<int>(f.node("flatten"))) {
      ++gathers;
      CHECK(op.group == plan::RankGroup{4, 1, 4});
    }
    if (op.kind == ScheduleOp::Kind::allreduce_start) {
      ++sums;
      CHECK(op.group == plan::RankGroup{0, 1, 8});
    }
  }
  CHECK(stats == 2);
  CHECK(gathers == 1);
  CHECK(sums == 1);
}

TEST_CASE("A step schedule moves an activation between layouts among the ranks whose blocks overlap",
          "[plan][schedule]") {
  Fixture f;
  plan::LayerCostModel costs(f.graph, f.profile, f.timer, plan::CostOptions{8, 1, 0, 0, 1});
  std::vector<Distribution> layout_of(f.graph.nodes.size(), dist(2, 2, 2, 1));
  for (const char* name : {"flatten", "fc1", "out"}) layout_of[f.node(name)] = dist(8);
  const auto layout = plan::predict_layout(costs, layout_of, "hybrid", 0, 0);
  INFO(layout.why);
  REQUIRE(layout.valid);
  const plan::StepSchedule schedule(costs, layout, 4 << 20, 4);
  check_ranks_agree(schedule);
  int moves = 0;
  for (const auto& op : schedule.rank_ops(5))
    if (op.kind == ScheduleOp::Kind::alltoall) {
      ++moves;
      CHECK(op.layer == static_cast<int>(f.node("flatten")));
      CHECK(op.group == plan::RankGroup{4, 1, 4});  // sample group 1's 4 ranks
    }
  CHECK(moves == 2);  // conv2's output forward, its gradient backward
}

TEST_CASE("A channel-split step schedule gathers and scatters within the channel group; a 2-D split in its rows "
          "and columns", "[plan][schedule]") {
  Fixture f;
  Distribution filter = dist(2);
  filter.filter = 2;
  Distribution grid = dist(1);
  grid.channel = 2, grid.filter = 2;
  for (const Distribution& split : {filter, grid}) {
    INFO(split.str());
    plan::LayerCostModel costs(f.graph, f.profile, f.timer, plan::CostOptions{split.ranks(), 1, 0, 0, 1});
    std::vector<Distribution> layout_of(f.graph.nodes.size(), dist(split.ranks()));
    layout_of[f.node("fc1")] = split;
    const auto layout = plan::predict_layout(costs, layout_of, "channels", 0, 0);
    REQUIRE(layout.valid);
    const plan::StepSchedule schedule(costs, layout, 4 << 20, 4);
    check_ranks_agree(schedule);
    int exchanges = 0;
    for (const auto& op : schedule.rank_ops(3))
      if (op.layer == static_cast<int>(f.node("fc1")) &&
          (op.kind == ScheduleOp::Kind::allgather || op.kind == ScheduleOp::Kind::reduce_scatter)) {
        ++exchanges;
        CHECK(op.group.count == 2);
      }
    CHECK(exchanges == static_cast<int>(costs.exchanges(f.node("fc1"), split).size()));
    CHECK(exchanges >= 2);
  }
}

TEST_CASE("A step schedule file lists every rank's operations in the format tessera-sim reads", "[plan][schedule]") {
  Fixture f;
  plan::LayerCostModel costs(f.graph, f.profile, f.timer, plan::CostOptions{8, 1, 0, 0, 1});
  const auto layout = plan::predict_layout(costs, std::vector<Distribution>(f.graph.nodes.size(), dist(2, 2, 2, 1)),
                                           "spatial", 0, 0);
  const plan::StepSchedule schedule(costs, layout, 4 << 20, 4);
  std::ostringstream out;
  schedule.write(out);
  const std::string text = out.str();
  CHECK(text.rfind("tessera-step-schedule 1\nranks 8\nranks_per_node 4\npredicted_step_seconds ", 0) == 0);
  CHECK_THAT(text, Catch::Contains("\nlabel spatial\nlayer 0 conv1\n"));
  CHECK_THAT(text, Catch::Contains("\nrank 7\n"));
  REQUIRE(text.size() > 5);
  CHECK(text.substr(text.size() - 4) == "end\n");
  // Rank 0's first halo: conv1's forward sends (count, then peer and bytes each), then the
  // ranks it receives from.
  const auto first = text.find("\nx 0 ");
  REQUIRE(first != std::string::npos);
  std::istringstream line(text.substr(first + 5, text.find('\n', first + 1) - first - 5));
  int sends = 0;
  line >> sends;
  CHECK(sends == 3);  // depth, height and the edge between them
}

TEST_CASE("A convolution that overlaps its halo exchange computes its interior while the halos travel",
          "[plan][schedule]") {
  Fixture f;
  const Distribution d = dist(1, 2);  // a depth split: the pieces need no buffers
  plan::LayerCostModel costs(f.graph, f.profile, f.timer, plan::CostOptions{2, 1, 0, 0, 1});
  const auto layout = plan::predict_layout(costs, std::vector<Distribution>(f.graph.nodes.size(), d), "depth", 0, 0);
  REQUIRE(layout.valid);
  const int conv1 = static_cast<int>(f.node("conv1")), conv2 = static_cast<int>(f.node("conv2"));
  // A layer's forward on rank 0 is: pack, exchange, unpack, compute; returns (the seconds
  // computed during the exchange, those after it).
  const auto forward_of = [&](layers::HaloOverlap mode, int layer) {
    plan::CostOptions options{2, 1, 0, 0, 1};
    options.halo_overlap = mode;
    plan::LayerCostModel costs(f.graph, f.profile, f.timer, options);
    const plan::StepSchedule s(costs, layout, 4 << 20, 1);
    check_ranks_agree(s);
    std::vector<ScheduleOp> ops;
    for (const auto& op : s.rank_ops(0))
      if (op.layer == layer) ops.push_back(op);
    REQUIRE(ops.size() >= 4);
    REQUIRE(ops[1].kind == ScheduleOp::Kind::exchange);
    REQUIRE(ops[3].kind == ScheduleOp::Kind::compute);
    for (size_t k = 2; k < ops.size(); ++k)  // backward's exchange computes nothing during it
      if (ops[k].kind == ScheduleOp::Kind::exchange) CHECK(ops[k].seconds == 0);
    return std::pair{ops[1].seconds, ops[3].seconds};
  };
  // conv1's block is 8 deep with a halo of 1 each side: 6 of 8 output planes need no halo.
  const auto [off_during, off_after] = forward_of(layers::HaloOverlap::off, conv1);
  const auto [during, after] = forward_of(layers::HaloOverlap::where_it_pays, conv1);
  CHECK(off_during == 0);
  CHECK(during + after == Approx(off_after));
  CHECK(during == Approx(0.75 * off_after));
  // conv2 (kernel 5) on a block 4 deep has no plane without halo: it exchanges first.
  CHECK(forward_of(layers::HaloOverlap::where_it_pays, conv2).first == 0);
  CHECK(forward_of(layers::HaloOverlap::always, conv2).first == 0);

  const plan::StepSchedule s(costs, layout, 4 << 20, 1);
  std::ostringstream out;
  s.write(out);
  CHECK_THAT(out.str(), Catch::Contains("\nxo " + std::to_string(conv1) + " "));
  CHECK_THAT(out.str(), !Catch::Contains("\nxo " + std::to_string(conv2) + " "));
}

TEST_CASE("A population's round trains every trainer on its own ranks, then partners swap their models",
          "[plan][schedule]") {
  Fixture f;
  const int n = 2;  // ranks per trainer, data parallel
  plan::LayerCostModel costs(f.graph, f.profile, f.timer, plan::CostOptions{n, 1, 0, 0, 1});
  const auto layout = plan::predict_layout(costs, std::vector<Distribution>(f.graph.nodes.size(), dist(n)), "data", 0, 0);
  REQUIRE(layout.valid);
  const plan::StepSchedule trainer(costs, layout, 4 << 20, 1);
  const plan::PopulationSchedule round(trainer, 4, 3, 0.5);
  REQUIRE(round.ranks() == 4 * n);
  // Partners pair up; with 4 trainers every one meets another.
  for (int t = 0; t < 4; ++t) {
    REQUIRE(round.partner(t) >= 0);
    CHECK(round.partner(t) != t);
    CHECK(round.partner(round.partner(t)) == t);
  }
  // Parameters and momentum in fp32, every layer whole on each rank of a data-parallel trainer.
  double state = 0;
  for (const auto& node : f.graph.nodes) state += 4.0 * (2.0 * static_cast<double>(node.trainable) + node.buffers);
  CHECK(trainer.state_bytes() == Approx(state));

  std::map<std::pair<int, int>, int> sent, received;
  for (int r = 0; r < round.ranks(); ++r) {
    const int t = r / n;
    const auto step = trainer.rank_ops(r % n);
    const auto ops = round.rank_ops(r);
    REQUIRE(ops.size() == 3 * step.size() + 3);
    for (size_t k = 0; k < 3 * step.size(); ++k) {  // its trainer's steps, on its trainer's ranks
      const ScheduleOp& op = ops[k];
      CHECK(op.kind == step[k % step.size()].kind);
      for (const auto& [peer, bytes] : op.sends) CHECK(peer / n == t);
      if (op.kind != ScheduleOp::Kind::compute && op.kind != ScheduleOp::Kind::exchange &&
          op.kind != ScheduleOp::Kind::wait_all) {
        CHECK(op.group.first / n == t);
        CHECK((op.group.first + op.group.stride * (op.group.count - 1)) / n == t);
      }
    }
    // The tournament: both models evaluated on half a batch each, the scores swapped, then the
    // states, with the same rank of the partner.
    CHECK(ops[ops.size() - 3].kind == ScheduleOp::Kind::compute);
    CHECK(ops[ops.size() - 3].seconds == Approx(2 * 0.5 * trainer.forward_seconds()));
    const int peer = round.partner(t) * n + r % n;
    const ScheduleOp& swap = ops.back();
    REQUIRE(swap.kind == ScheduleOp::Kind::exchange);
    REQUIRE(swap.sends.size() == 1);
    CHECK(swap.sends[0] == std::pair<int, double>{peer, trainer.state_bytes()});
    CHECK(swap.receives == std::vector<int>{peer});
    for (const auto& op : ops) {
      for (const auto& [to, bytes] : op.sends) ++sent[{r, to}];
      for (const int from : op.receives) ++received[{from, r}];
    }
  }
  CHECK(sent == received);

  // Without tournaments ("selection": "none") the trainers only train.
  const plan::PopulationSchedule independent(trainer, 4, 3, 0.5, false);
  CHECK(independent.rank_ops(5).size() == 3 * trainer.rank_ops(1).size());
  std::ostringstream out;
  round.write(out);
  CHECK_THAT(out.str(), Catch::Contains("\nranks 8\n"));
  CHECK_THAT(out.str(), Catch::Contains("\nlabel 4 trainers, a round of 3 steps: data\n"));
}
