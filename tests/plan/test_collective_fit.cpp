#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/plan/collective_fit.hpp"
#include "tessera/plan/collective_timing.hpp"

using namespace tessera;
using namespace tessera::plan;

namespace {

const Collective kAll[] = {Collective::point_to_point, Collective::allreduce, Collective::allgather,
                           Collective::alltoall, Collective::reduce_scatter};

std::vector<CollectiveSample> samples_of(Collective c, LinkCost truth, double noise) {
  std::vector<CollectiveSample> samples;
  int k = 0;
  for (const int64_t ranks : {2, 3, 4, 8})
    for (const double bytes : {8.0, 1024.0, 65536.0, 1048576.0, 4194304.0}) {
      const AlphaBetaTerms t = alpha_beta_terms(c, ranks, bytes);
      // Alternating relative errors of ±noise: the fit must average them out.
      const double err = (k++ % 2 == 0 ? 1 + noise : 1 - noise);
      samples.push_back({ranks, bytes, (t.alpha * truth.alpha + t.beta * truth.beta) * err});
    }
  return samples;
}

}  // namespace

TEST_CASE("the fit recovers alpha and beta of every collective's formula", "[plan][collective_fit]") {
  const LinkCost truth{1.5e-6, 1.0 / 8e9};
  for (Collective c : kAll) {
    INFO(collective_name(c));
    const LinkCost exact = fit_link_cost(c, samples_of(c, truth, 0));
    CHECK(exact.alpha == Approx(truth.alpha).epsilon(1e-6));
    CHECK(exact.beta == Approx(truth.beta).epsilon(1e-6));
    const LinkCost noisy = fit_link_cost(c, samples_of(c, truth, 0.05));
    CHECK(noisy.alpha == Approx(truth.alpha).epsilon(0.1));
    CHECK(noisy.beta == Approx(truth.beta).epsilon(0.1));
  }
}

TEST_CASE("the fit keeps alpha and beta non-negative", "[plan][collective_fit]") {
  // Larger messages faster than small ones: the unconstrained β would be negative.
  const std::vector<CollectiveSample> odd = {{2, 8, 2e-6}, {2, 1e6, 1e-6}, {2, 4e6, 0.5e-6}};
  const LinkCost fit = fit_link_cost(Collective::point_to_point, odd);
  CHECK(fit.alpha > 0);
  CHECK(fit.beta == 0);
  // Pure bandwidth: the time is proportional to the size.
  const std::vector<CollectiveSample> bandwidth = {{2, 1e3, 1e-7}, {2, 1e6, 1e-4}, {2, 4e6, 4e-4}};
  const LinkCost b = fit_link_cost(Collective::point_to_point, bandwidth);
  CHECK(b.alpha == Approx(0).margin(1e-12));
  CHECK(b.beta == Approx(1e-10).epsilon(1e-6));
}

TEST_CASE("the fit refuses timings without a positive duration", "[plan][collective_fit]") {
  CHECK_THROWS_WITH(fit_link_cost(Collective::allreduce, {{2, 8, 0}}),
                    Catch::Contains("allreduce") && Catch::Contains("no timing"));
}

TEST_CASE("an allreduce across nodes of several ranks is fitted to what its within-node part leaves",
          "[plan][collective_fit]") {
  MachineProfile p;
  p.ranks_per_node = 4;
  const LinkCost within{2e-6, 1.0 / 15e9}, across{10e-6, 1.0 / 6e9};
  CollectiveTimings timings;
  for (const int64_t ranks : {2, 3, 4})
    for (const double bytes : {8.0, 65536.0, 4194304.0}) {
      const AlphaBetaTerms t = alpha_beta_terms(Collective::allreduce, ranks, bytes);
      timings.within_node[Collective::allreduce].push_back({ranks, bytes, t.alpha * within.alpha + t.beta * within.beta});
    }
  for (const int64_t ranks : {8, 16})
    for (const double bytes : {8.0, 65536.0, 4194304.0}) {
      const SplitTerms t = allreduce_split_terms(ranks, 4, bytes);
      const double seconds = t.within.alpha * within.alpha + t.within.beta * within.beta + t.across.alpha * across.alpha +
                             t.across.beta * across.beta;
      timings.across_nodes[Collective::allreduce].push_back({ranks, bytes, seconds});
    }
  fit_collectives(timings, p);
  CHECK(p.within_node.at(Collective::allreduce).alpha == Approx(within.alpha).epsilon(1e-6));
  CHECK(p.across_nodes.at(Collective::allreduce).alpha == Approx(across.alpha).epsilon(1e-6));
  CHECK(p.across_nodes.at(Collective::allreduce).beta == Approx(across.beta).epsilon(1e-6));
  // And the profile prices those timings back.
  CHECK(p.collective_seconds(Collective::allreduce, 16, 4194304.0) ==
        Approx(timings.across_nodes[Collective::allreduce].back().seconds).epsilon(1e-6));
}
