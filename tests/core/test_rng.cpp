#include <catch2/catch.hpp>

#include <cmath>

#include "tessera/core/rng.hpp"

using namespace tessera;

TEST_CASE("Counter-based RNG is a pure function of seed, stream and index", "[core][rng]") {
  CHECK(rng::uniform(1, 2, 3) == rng::uniform(1, 2, 3));
  CHECK(rng::uniform(1, 2, 3) != rng::uniform(1, 2, 4));
  CHECK(rng::uniform(1, 2, 3) != rng::uniform(2, 2, 3));
  CHECK(rng::uniform(1, 2, 3) != rng::uniform(1, 3, 3));
  CHECK(rng::stream_of("conv1.weight") != rng::stream_of("conv2.weight"));
}

TEST_CASE("RNG draws have the moments of their distributions", "[core][rng]") {
  const int n = 200000;
  double su = 0, su2 = 0, sn = 0, sn2 = 0;
  for (int i = 0; i < n; ++i) {
    const double u = rng::uniform(7, 11, static_cast<uint64_t>(i));
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    su += u;
    su2 += u * u;
    const double z = rng::normal(7, 11, static_cast<uint64_t>(i));
    sn += z;
    sn2 += z * z;
  }
  CHECK(su / n == Approx(0.5).margin(0.005));
  CHECK(su2 / n - (su / n) * (su / n) == Approx(1.0 / 12).margin(0.002));
  CHECK(sn / n == Approx(0.0).margin(0.01));
  CHECK(sn2 / n == Approx(1.0).margin(0.02));
}
