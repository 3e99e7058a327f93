#include <catch2/catch.hpp>

#include "tessera/bench/portability_metric.hpp"
#include "tessera/bench/roofline.hpp"

using namespace tessera::bench;

TEST_CASE("performance portability is the harmonic mean of the efficiencies", "[bench]") {
  // 2 / (1/0.5 + 1/0.25) = 2 / 6
  CHECK(performance_portability({0.5, 0.25}) == Approx(1.0 / 3.0));
  // 3 / (5 + 2.5 + 1.25)
  CHECK(performance_portability({0.2, 0.4, 0.8}) == Approx(3.0 / 8.75));
  CHECK(performance_portability({1.0, 1.0, 1.0}) == Approx(1.0));
}

TEST_CASE("performance portability over a single platform is its efficiency", "[bench]") {
  CHECK(performance_portability({0.8}) == Approx(0.8));
}

TEST_CASE("a platform that cannot run the application makes the portability 0", "[bench]") {
  CHECK(performance_portability({0.9, std::nullopt, 0.7}) == 0.0);
  CHECK(performance_portability({0.9, 0.0}) == 0.0);
  CHECK(performance_portability({}) == 0.0);
}

TEST_CASE("the roofline bound is the slower of arithmetic and memory traffic", "[bench]") {
  // 100 GFLOP/s, 10 GB/s: 1 GFLOP over 1 MB is compute-bound (10 ms), over 1 GB memory-bound (100 ms).
  CHECK(roofline_seconds(1e9, 1e6, 100, 10) == Approx(0.01));
  CHECK_FALSE(memory_bound(1e9, 1e6, 100, 10));
  CHECK(roofline_seconds(1e9, 1e9, 100, 10) == Approx(0.1));
  CHECK(memory_bound(1e9, 1e9, 100, 10));
  CHECK(architectural_efficiency(0.04, 1e9, 1e6, 100, 10) == Approx(0.25));
}
