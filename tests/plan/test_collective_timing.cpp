#include <catch2/catch.hpp>

#include <cmath>

#include "tessera/parallel/communicator.hpp"
#include "tessera/plan/collective_timing.hpp"
#include "tessera/plan/node_layout.hpp"

using namespace tessera;
using namespace tessera::plan;

TEST_CASE("calibration times more message sizes and repetitions unless quick", "[plan][collective_timing]") {
  const TimingEffort full = TimingEffort::of(false), quick = TimingEffort::of(true);
  CHECK(full.sizes == std::vector<double>{8, 1 << 10, 64 << 10, 1 << 20, 4 << 20});
  CHECK(quick.sizes == std::vector<double>{8, 64 << 10, 1 << 20});
  CHECK(quick.reps < full.reps);
  CHECK(quick.warmup < full.warmup);
  CHECK(quick.quick);
  CHECK_FALSE(full.quick);
}

TEST_CASE("the bytes a timing sent are whole per-peer shares and whole floats", "[plan][collective_timing]") {
  CHECK(sent_bytes(Collective::alltoall, 64, 3) == 63);      // 21 bytes to each of 3 ranks
  CHECK(sent_bytes(Collective::alltoall, 8, 16) == 16);      // at least one byte each
  CHECK(sent_bytes(Collective::allreduce, 10, 2) == 8);      // two floats
  CHECK(sent_bytes(Collective::reduce_scatter, 2, 2) == 4);  // at least one float
  CHECK(sent_bytes(Collective::allgather, 1000, 4) == 1000);
  CHECK(sent_bytes(Collective::point_to_point, 8, 2) == 8);
}

TEST_CASE("collectives on one rank take a positive, finite time, point-to-point needs a peer",
          "[plan][collective_timing]") {
  const auto self = parallel::Communicator::self();
  CollectiveTimer timer(TimingEffort::of(true));
  for (const Collective c :
       {Collective::allreduce, Collective::allgather, Collective::alltoall, Collective::reduce_scatter})
    for (const double bytes : {8.0, 65536.0, 1048576.0}) {
      const double t = timer.seconds(c, bytes, self);
      INFO(collective_name(c) << " of " << bytes << " bytes: " << t << " s");
      CHECK(t > 0);
      CHECK(std::isfinite(t));
      CHECK(t < 1.0);  // a copy of at most 1 MiB
    }
  CHECK_THROWS_AS(timer.seconds(Collective::point_to_point, 8, self), parallel::DistError);
}

TEST_CASE("a job of one rank sits on one node and has no collectives to time", "[plan][collective_timing]") {
  const auto self = parallel::Communicator::self();
  const NodeLayout pl = NodeLayout::of(self);
  CHECK(pl.nodes == 1);
  CHECK(pl.ranks_on_first_node == 1);
  CHECK(pl.node_of == std::vector<int>{0});
  CHECK_FALSE(pl.spans_nodes(1));
  int groups = 0;
  const CollectiveTimings t = time_collectives(self, pl, 4, TimingEffort::of(true), [&](int, bool) { ++groups; });
  CHECK(groups == 0);
  CHECK(t.within_node.empty());
  CHECK(t.across_nodes.empty());
}

TEST_CASE("a placement spans nodes from the first rank on another node", "[plan][collective_timing]") {
  NodeLayout pl;
  pl.node_of = {0, 0, 2, 2};
  pl.nodes = 2;
  pl.ranks_on_first_node = 2;
  CHECK_FALSE(pl.spans_nodes(2));
  CHECK(pl.spans_nodes(3));
  CHECK(pl.spans_nodes(4));
}

TEST_CASE("timings within and across nodes are fitted into the profile's links", "[plan][collective_timing]") {
  const LinkCost within{2e-6, 1.0 / 10e9}, across{20e-6, 1.0 / 1e9};
  CollectiveTimings t;
  for (const int64_t ranks : {2, 3, 4})
    for (const double bytes : {8.0, 65536.0, 1048576.0}) {
      const AlphaBetaTerms terms = alpha_beta_terms(Collective::allreduce, ranks, bytes);
      t.within_node[Collective::allreduce].push_back(
          {ranks, bytes, terms.alpha * within.alpha + terms.beta * within.beta});
      t.across_nodes[Collective::allreduce].push_back(
          {ranks, bytes, terms.alpha * across.alpha + terms.beta * across.beta});
    }
  MachineProfile p;
  fit_collectives(t, p);
  REQUIRE(p.within_node.count(Collective::allreduce) == 1);
  REQUIRE(p.across_nodes.count(Collective::allreduce) == 1);
  CHECK(p.within_node.size() == 1);
  CHECK(p.within_node[Collective::allreduce].alpha == Approx(within.alpha).epsilon(1e-6));
  CHECK(p.within_node[Collective::allreduce].beta == Approx(within.beta).epsilon(1e-6));
  CHECK(p.across_nodes[Collective::allreduce].alpha == Approx(across.alpha).epsilon(1e-6));
  CHECK(p.across_nodes[Collective::allreduce].beta == Approx(across.beta).epsilon(1e-6));
}
