#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/parallel/cpu_set.hpp"

using namespace tessera;
using parallel::CpuSet;

TEST_CASE("A CPU set reads and writes the Linux list format", "[parallel][cpuset]") {
  const CpuSet s = CpuSet::parse("8,0-3,10-11,2", "binding");
  CHECK(s.pus() == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
  CHECK(s.count() == 7);
  CHECK(s.str() == "0-3,8,10-11");
  CHECK(CpuSet::parse(s.str(), "again") == s);
  CHECK(CpuSet::parse("", "empty").empty());
  CHECK(CpuSet({5}).str() == "5");
}

TEST_CASE("CPU sets intersect", "[parallel][cpuset]") {
  const CpuSet a = CpuSet::parse("0-7", "a"), b = CpuSet::parse("6-9", "b"), c = CpuSet::parse("10-11", "c");
  CHECK(a.intersects(b));
  CHECK(a.intersection(b).str() == "6-7");
  CHECK_FALSE(a.intersects(c));
  CHECK(a.intersection(c).empty());
}

TEST_CASE("A malformed CPU list is refused naming where it came from", "[parallel][cpuset]") {
  for (const char* bad : {"3-1", "a", "1,", "-1", "1-", "1,,2", "0x3"}) {
    INFO(bad);
    try {
      CpuSet::parse(bad, "OMP_PLACES");
      FAIL("accepted");
    } catch (const ConfigError& e) {
      CHECK(e.path() == "OMP_PLACES");
      CHECK_THAT(e.what(), Catch::Contains("is not a CPU list"));
    }
  }
}
