#include <catch2/catch.hpp>

#include "support/skip.hpp"

#include "tessera/core/error.hpp"
#include "tessera/parallel/placement_check.hpp"

using namespace tessera;
using parallel::CpuSet;
using parallel::NodeTopology;
using parallel::RankBinding;

namespace {

parallel::Distribution dist(int sample, int channel, int filter = 1) {
  parallel::Distribution d;
  d.sample = sample;
  d.channel = channel;
  d.filter = filter;
  return d;
}

/// Ranks 0..n-1 each bound to the given CPU list.
std::vector<RankBinding> bound(const std::vector<std::string>& lists) {
  std::vector<RankBinding> out;
  for (size_t r = 0; r < lists.size(); ++r) out.push_back({static_cast<int>(r), CpuSet::parse(lists[r], "test")});
  return out;
}

}  // namespace

TEST_CASE("Channel groups that each sit inside one node pass", "[parallel][placement]") {
  // 8 ranks, 4 per node: each channel group of 4 is a node, or half of one.
  const std::vector<int> four_per_node{0, 0, 0, 0, 4, 4, 4, 4};
  CHECK_NOTHROW(parallel::check_channel_groups_within_nodes(dist(2, 4), four_per_node, "model.distribution"));
  CHECK_NOTHROW(parallel::check_channel_groups_within_nodes(dist(4, 1, 2), four_per_node, "model.distribution"));
  // No channel split: any placement is fine.
  CHECK_NOTHROW(parallel::check_channel_groups_within_nodes(dist(8, 1), {0, 1, 2, 3, 4, 5, 6, 7}, "x"));
}

TEST_CASE("A launch whose channel groups straddle nodes is refused naming the ranks", "[parallel][placement]") {
  // 3 ranks per node: the second filter group {2, 3} has a rank on each of the first two nodes.
  const std::vector<int> three_per_node{0, 0, 0, 3, 3, 3};
  try {
    parallel::check_channel_groups_within_nodes(dist(3, 1, 2), three_per_node, "layers[2].distribution");
    FAIL("accepted");
  } catch (const ConfigError& e) {
    CHECK(e.path() == "layers[2].distribution");
    const std::string m = e.what();
    CHECK_THAT(m, Catch::Contains("the channel group of ranks 2-3 spans 2 nodes"));
    CHECK_THAT(m, Catch::Contains("rank 2 on one node; rank 3 on another"));
    CHECK_THAT(m, Catch::Contains("a multiple of 2"));
    CHECK_THAT(m, Catch::Contains("--map-by ppr:K:node"));
  }
  // A group of 4 over nodes of 2 ranks.
  CHECK_THROWS_WITH(parallel::check_channel_groups_within_nodes(dist(1, 4), {0, 0, 2, 2}, "model.distribution"),
                    Catch::Contains("ranks 0-3 spans 2 nodes (ranks 0-1 on one node; ranks 2-3 on another)"));
}

TEST_CASE("Ranks bound one per NUMA domain draw no warning", "[parallel][placement]") {
  if (!NodeTopology::supported()) TESSERA_SKIP("hwloc", "built without hwloc (TESSERA_ENABLE_HWLOC=OFF)");
  const auto knl = NodeTopology::from_synthetic("package:1 numa:4 core:16 pu:4", "knl");
  CHECK(parallel::binding_warning(knl, bound({"0-63", "64-127", "128-191", "192-255"})) == "");
  // Two ranks per domain, each on its own 8 cores.
  std::vector<std::string> halves;
  for (int r = 0; r < 8; ++r) halves.push_back(std::to_string(32 * r) + "-" + std::to_string(32 * r + 31));
  CHECK(parallel::binding_warning(knl, bound(halves)) == "");
  const auto skx = NodeTopology::from_synthetic("package:2 numa:1 core:20 pu:1", "skx");
  CHECK(parallel::binding_warning(skx, bound({"0-19", "20-39"})) == "");
  const auto one = NodeTopology::from_synthetic("package:1 core:8 pu:2", "one");
  CHECK(parallel::binding_warning(one, bound({"0-15"})) == "");
}

TEST_CASE("Ranks spanning NUMA domains or sharing cores are warned about with the fix", "[parallel][placement]") {
  if (!NodeTopology::supported()) TESSERA_SKIP("hwloc", "built without hwloc (TESSERA_ENABLE_HWLOC=OFF)");
  const auto knl = NodeTopology::from_synthetic("package:1 numa:4 core:16 pu:4", "knl");
  SECTION("4 unbound ranks on KNL SNC-4") {
    const std::string w = parallel::binding_warning(knl, bound({"0-255", "0-255", "0-255", "0-255"}));
    CHECK_THAT(
        w, Catch::Contains("rank(s) 0-3 run threads on several NUMA domains (rank 0: CPUs 0-255, NUMA domains 0-3)"));
    CHECK_THAT(
        w, Catch::Contains("rank(s) 1-3 share cores with other ranks of the node (ranks 0 and 1 both on CPUs 0-3)"));
    CHECK_THAT(w, Catch::Contains("With 4 rank(s) on this node: mpirun --map-by ppr:1:numa --bind-to numa; "
                                  "Slurm: srun --ntasks-per-node=4 --cpu-bind=ldoms"));
  }
  SECTION("2 ranks on KNL, each over two domains") {
    const std::string w = parallel::binding_warning(knl, bound({"0-127", "128-255"}));
    CHECK_THAT(w, Catch::Contains("rank(s) 0-1 run threads on several NUMA domains"));
    CHECK_THAT(w, !Catch::Contains("share cores"));
    CHECK_THAT(w, Catch::Contains("run 4 ranks per node (one per NUMA domain): mpirun --map-by ppr:1:numa"));
  }
  SECTION("One rank over both sockets of a Skylake node") {
    const auto skx = NodeTopology::from_synthetic("package:2 numa:1 core:20 pu:1", "skx");
    const std::string w = parallel::binding_warning(skx, bound({"0-39"}));
    CHECK_THAT(w, Catch::Contains("NUMA domains 0-1"));
    CHECK_THAT(w, Catch::Contains("run 2 ranks per node (one per NUMA domain)"));
  }
  SECTION("Two ranks on the same cores of a single-domain node") {
    const auto one = NodeTopology::from_synthetic("package:1 core:8 pu:2", "one");
    const std::string w = parallel::binding_warning(one, bound({"0-15", "0-15"}));
    CHECK_THAT(w, !Catch::Contains("NUMA domains"));
    CHECK_THAT(w, Catch::Contains("rank(s) 1 share cores"));
    // Nine ranks on eight cores must share: nothing to warn about.
    CHECK(parallel::binding_warning(one, bound(std::vector<std::string>(9, "0-15"))) == "");
    CHECK_THAT(w, Catch::Contains("mpirun --map-by ppr:2:numa:PE=4 --bind-to core; "
                                  "Slurm: srun --ntasks-per-node=2 --cpus-per-task=8 --cpu-bind=cores"));
  }
}

TEST_CASE("The recommended ranks per node fill the NUMA domains and keep channel groups whole",
          "[parallel][placement]") {
  if (!NodeTopology::supported()) TESSERA_SKIP("hwloc", "built without hwloc (TESSERA_ENABLE_HWLOC=OFF)");
  const auto knl = NodeTopology::from_synthetic("package:1 numa:4 core:16 pu:4", "knl");
  const auto skx = NodeTopology::from_synthetic("package:2 numa:1 core:20 pu:1", "skx");
  const auto one = NodeTopology::from_synthetic("package:1 core:8 pu:2", "one");
  CHECK(parallel::recommended_ranks_per_node(knl) == 4);
  CHECK(parallel::recommended_ranks_per_node(knl, 2) == 4);
  CHECK(parallel::recommended_ranks_per_node(knl, 8) == 8);
  CHECK(parallel::recommended_ranks_per_node(skx, 4) == 4);
  CHECK(parallel::recommended_ranks_per_node(one) == 1);
  CHECK(parallel::recommended_ranks_per_node(one, 3) == 3);
  CHECK(parallel::recommended_launch(knl, 8) ==
        "mpirun --map-by ppr:2:numa:PE=8 --bind-to core; Slurm: srun --ntasks-per-node=8 --cpus-per-task=32 "
        "--cpu-bind=cores");
}
