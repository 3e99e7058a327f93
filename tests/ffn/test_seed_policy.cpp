// Where flood filling starts objects: the distance transform against brute force, and seeds
// ordered from the middle of a cell outwards.
#include <catch2/catch.hpp>

#include <limits>

#include "tessera/ffn/seed_policy.hpp"

using namespace tessera::ffn;

TEST_CASE("the squared distance transform equals the brute-force nearest boundary voxel", "[ffn]") {
  const std::array<int64_t, 3> size{7, 9, 5};
  std::vector<uint8_t> boundary(7 * 9 * 5, 0);
  for (size_t i : {3u, 77u, 150u, 151u, 300u}) boundary[i] = 1;
  const std::vector<float> d = squared_distance_to(boundary, size);
  for (int64_t i = 0; i < 315; ++i) {
    int64_t best = std::numeric_limits<int64_t>::max();
    for (int64_t j = 0; j < 315; ++j) {
      if (boundary[static_cast<size_t>(j)] == 0) continue;
      const int64_t dd = i / 45 - j / 45, dh = i / 5 % 9 - j / 5 % 9, dw = i % 5 - j % 5;
      best = std::min(best, dd * dd + dh * dh + dw * dw);
    }
    REQUIRE(d[static_cast<size_t>(i)] == Approx(static_cast<double>(best)));
  }
}

TEST_CASE("interior seeds start deepest inside and leave dark voxels out", "[ffn]") {
  // A 16³ volume dark (−2) on the plane w = 0 and bright (+1) elsewhere: depth grows with w.
  LabeledVolume v;
  v.size = {16, 16, 16};
  v.image.assign(16 * 16 * 16, 1.0f);
  for (int64_t i = 0; i < v.voxels(); i += 16) v.image[static_cast<size_t>(i)] = -2.0f;
  const auto grid = grid_seeds(v.size, 4);
  CHECK(grid.size() == 64);
  CHECK(grid.front() == Voxel{2, 2, 2});
  const auto seeds = interior_seeds(v, 4, -1.0f);
  REQUIRE(seeds.size() == 64);
  CHECK(seeds.front() == Voxel{2, 2, 14});  // deepest (w = 14), raster order among equals
  CHECK(seeds.back()[2] == 2);
  for (size_t i = 1; i < seeds.size(); ++i) REQUIRE(seeds[i - 1][2] >= seeds[i][2]);
  // With the grid on the dark plane (spacing 1 starts at w = 0), those seeds are left out.
  CHECK(interior_seeds(v, 1, -1.0f).size() == 16 * 16 * 15);
}
