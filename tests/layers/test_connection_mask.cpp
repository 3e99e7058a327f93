// The connection mask of BCPNN layers: random masks with an exact fan-in, and structural
// plasticity's swap rule on hand-made mutual information.
#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/layers/connection_mask.hpp"

using tessera::Error;
using tessera::layers::ConnectionMask;

namespace {

int64_t fan_in(const ConnectionMask& m, int64_t output) {
  int64_t n = 0;
  for (int64_t g = 0; g < m.inputs(); ++g) n += m.connected(output, g) ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("a random connection mask reads the same number of inputs in every output", "[bcpnn][mask]") {
  const ConnectionMask m = ConnectionMask::random(30, 784, 78, 1, 2);
  for (int64_t h = 0; h < 30; ++h) CHECK(fan_in(m, h) == 78);
  // Different outputs read different inputs, and the draw is a function of seed and stream.
  int64_t same = 0;
  for (int64_t g = 0; g < 784; ++g) same += m.connected(0, g) && m.connected(1, g) ? 1 : 0;
  CHECK(same < 40);
  CHECK(ConnectionMask::random(30, 784, 78, 1, 2).values() == m.values());
  CHECK(ConnectionMask::random(30, 784, 78, 2, 2).values() != m.values());
  CHECK_THROWS_AS(ConnectionMask::random(2, 4, 5, 1, 2), Error);
}

TEST_CASE("structural plasticity swaps weak connections for strong ones and keeps the fan-in", "[bcpnn][mask]") {
  // Output 0 reads inputs 0 and 1; output 1 reads inputs 2 and 3.
  ConnectionMask m = ConnectionMask::of(2, 4, {1, 1, 0, 0, 0, 0, 1, 1});
  CHECK(m.fan_in() == 2);
  // Scores are I(h, g) / (1 + other outputs reading g). Output 0: g0 0.1, g1 0.3, g2 0.6/2,
  // g3 1.0/2: g0 goes for g3, then g1 (0.3) against g2 (0.3) is no strict gain. Output 1 (g3
  // now read by output 0 too): g0 0.9, g1 0.05/2, g2 0.2, g3 0.4/2: g2 goes for g0, then g3
  // (0.2) against g2 (0.2) is no gain.
  const std::vector<float> mi{0.1f, 0.3f, 0.6f, 1.0f, 0.9f, 0.05f, 0.2f, 0.4f};
  const int64_t swaps = m.rewire(mi, 16);
  CHECK(swaps == 2);
  CHECK(m.values() == std::vector<float>{0, 1, 0, 1, 1, 0, 0, 1});
  for (int64_t h = 0; h < 2; ++h) CHECK(fan_in(m, h) == 2);
  // At most `swaps` per output.
  ConnectionMask once = ConnectionMask::of(1, 4, {1, 1, 0, 0});
  CHECK(once.rewire({0.0f, 0.0f, 1.0f, 1.0f}, 1) == 1);
  CHECK(fan_in(once, 0) == 2);
  // A settled mask stays.
  CHECK(once.rewire({0.5f, 0.5f, 0.5f, 0.5f}, 16) == 0);
}

TEST_CASE("a connection mask refuses uneven fan-ins and values other than 0 and 1", "[bcpnn][mask]") {
  CHECK_THROWS_WITH(ConnectionMask::of(2, 2, {1, 0, 1, 1}), Catch::Contains("reads 2 inputs, output 0 reads 1"));
  CHECK_THROWS_WITH(ConnectionMask::of(1, 2, {0.5f, 1}), Catch::Contains("not 0 or 1"));
  CHECK_THROWS_WITH(ConnectionMask::of(1, 2, {1}), Catch::Contains("1 values for 1x2"));
  CHECK_THROWS_WITH(ConnectionMask().rewire({1.0f}, 1), Catch::Contains("mutual information"));
}
