#include <catch2/catch.hpp>

#include "support/skip.hpp"

#include <cstdio>
#include <fstream>

#include "tessera/core/error.hpp"
#include "tessera/parallel/node_topology.hpp"

using namespace tessera;
using parallel::CpuSet;
using parallel::NodeTopology;

TEST_CASE("Synthetic topologies read as their description says", "[parallel][topology]") {
  if (!NodeTopology::supported()) {
    CHECK_THROWS_WITH(NodeTopology::this_node(), Catch::Contains("TESSERA_ENABLE_HWLOC=OFF"));
    TESSERA_SKIP("hwloc", "built without hwloc: no synthetic topology to read");
  }
  SECTION("KNL in SNC-4: 4 NUMA domains of 16 cores with 4 threads each") {
    const auto knl = NodeTopology::from_synthetic("package:1 numa:4 core:16 pu:4", "knl");
    CHECK(knl.packages().size() == 1);
    REQUIRE(knl.numa_domains().size() == 4);
    CHECK(knl.cores().size() == 64);
    CHECK(knl.cpus().count() == 256);
    CHECK(knl.numa_domains()[1].cpus.str() == "64-127");
    CHECK(knl.cores()[16].str() == "64-67");
    CHECK(knl.numa_domains_of(CpuSet::parse("60-70", "b")) == std::vector<int>{0, 1});
    CHECK(knl.cores_of(CpuSet::parse("60-70", "b")) == std::vector<int>{15, 16, 17});
    CHECK_THAT(knl.describe(), Catch::Contains("1 package(s), 4 NUMA domain(s), 64 core(s), 256 hardware thread(s)"));
  }
  SECTION("2-socket Skylake: 2 packages, each one NUMA domain of 20 cores") {
    const auto skx = NodeTopology::from_synthetic("package:2 numa:1 core:20 pu:1", "skx");
    CHECK(skx.packages().size() == 2);
    REQUIRE(skx.numa_domains().size() == 2);
    CHECK(skx.numa_domains()[1].cpus.str() == "20-39");
    CHECK(skx.packages()[0].cpus.str() == "0-19");
    CHECK(skx.cores().size() == 40);
  }
  SECTION("A node with no NUMA level has one domain") {
    const auto one = NodeTopology::from_synthetic("package:1 core:8 pu:2", "one");
    REQUIRE(one.numa_domains().size() == 1);
    CHECK(one.numa_domains()[0].cpus.str() == "0-15");
    CHECK(one.cores().size() == 8);
  }
}

TEST_CASE("Topology sources that hwloc cannot read are refused by name", "[parallel][topology]") {
  if (!NodeTopology::supported()) TESSERA_SKIP("hwloc", "built without hwloc (TESSERA_ENABLE_HWLOC=OFF)");
  CHECK_THROWS_AS(NodeTopology::from_synthetic("package:two", "--topology"), ConfigError);
  CHECK_THROWS_WITH(NodeTopology::from_synthetic("package:two", "--topology"), Catch::StartsWith("--topology: "));
  CHECK_THROWS_WITH(NodeTopology::from_xml_file("/nonexistent/node.xml"),
                    Catch::Contains("/nonexistent/node.xml: cannot open"));
  const std::string junk = "test_node_topology_junk.xml";
  std::ofstream(junk) << "not xml at all\n";
  CHECK_THROWS_WITH(NodeTopology::from_xml_file(junk), Catch::Contains("not an hwloc topology"));
  std::remove(junk.c_str());
}

TEST_CASE("This node and this process's binding are read from the machine", "[parallel][topology]") {
  if (!NodeTopology::supported()) TESSERA_SKIP("hwloc", "built without hwloc (TESSERA_ENABLE_HWLOC=OFF)");
  const auto node = NodeTopology::this_node();
  CHECK(node.numa_domains().size() >= 1);
  CHECK(node.cores().size() >= 1);
  const CpuSet binding = parallel::this_process_binding();
  REQUIRE_FALSE(binding.empty());
  CHECK(binding.intersection(node.cpus()) == binding);
  CHECK(node.numa_domains_of(binding).size() >= 1);
}
