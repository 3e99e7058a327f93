// halo_widths under uneven spatial splits: every rank's input block must give its output
// block through the halos, which a SpatialAlignment makes possible for strided windows.
#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/layers/haloed_input.hpp"

using namespace tessera;

namespace {

layers::Window window(int64_t kernel, int64_t stride, int64_t padding) {
  layers::Window w;
  w.kernel = {1, kernel, 1};
  w.stride = {1, stride, 1};
  w.padding = {0, padding, 0};
  return w;
}

}  // namespace

TEST_CASE("A stride-1 window splits any extent over ranks that each hold its halo", "[layers][halo]") {
  const parallel::SpatialAlignment planes;
  // 13 over 3 ranks: 4, 5, 4 planes, a halo of 1 on each side.
  const auto h = layers::halo_widths({1, 3, 1}, {1, 13, 4}, planes, window(3, 1, 1), "conv");
  CHECK(h.before[1] == 1);
  CHECK(h.after[1] == 1);
  // A window of 7 needs 3 planes from each neighbour; 6 over 3 ranks leaves 2 each.
  CHECK_THROWS_WITH(layers::halo_widths({1, 3, 1}, {1, 6, 4}, planes, window(7, 1, 3), "conv"),
                    Catch::Contains("are narrower than the halo"));
}

TEST_CASE("A strided window needs its input cut in units of the stride", "[layers][halo]") {
  parallel::SpatialAlignment alignment;
  // 14 → 7 by stride 2 over 3 ranks: cut to the plane, 14 gives 5, 4, 5 and 7 gives 2, 3, 2,
  // so rank 1's inputs start at 5, not at 2·2.
  CHECK_THROWS_WITH(layers::halo_widths({1, 3, 1}, {1, 14, 4}, alignment, window(2, 2, 0), "pool"),
                    Catch::Contains("rank 1's inputs [5, 9) do not give its outputs [2, 5)"));
  // Aligned to 2 planes, 14 is 7 units like 7: 4, 6, 4 planes give 2, 3, 2 outputs.
  alignment.set(1, 14, 2);
  CHECK_FALSE(layers::halo_widths({1, 3, 1}, {1, 14, 4}, alignment, window(2, 2, 0), "pool").any());
  // Kernel 3, stride 2, padding 1 reads one plane before each block.
  const auto h = layers::halo_widths({1, 3, 1}, {1, 14, 4}, alignment, window(3, 2, 1), "conv");
  CHECK(h.before[1] == 1);
  CHECK(h.after[1] == 0);
  // An input of 13 gives 7 outputs with that window (the last reads padding), but in units of
  // 2 it is 6 units like 6, not 7: rank 1's block [4, 8) gives 2 outputs, its output block
  // [2, 5) holds 3.
  alignment.set(1, 13, 2);
  CHECK_THROWS_WITH(layers::halo_widths({1, 3, 1}, {1, 13, 4}, alignment, window(3, 2, 1), "conv"),
                    Catch::Contains("cannot split height over 3 ranks") &&
                        Catch::Contains("rank 1's inputs [4, 8) do not give its outputs [2, 5)"));
}

TEST_CASE("Even splits need no alignment, as before uneven ones existed", "[layers][halo]") {
  const parallel::SpatialAlignment planes;
  const auto h = layers::halo_widths({2, 2, 2}, {16, 16, 16}, planes, window(2, 2, 0), "pool");
  CHECK_FALSE(h.any());
  // A valid (unpadded) convolution shrinks the extent: its blocks cannot line up.
  CHECK_THROWS_WITH(layers::halo_widths({1, 2, 1}, {1, 16, 4}, planes, window(3, 1, 0), "conv"),
                    Catch::Contains("split height over fewer ranks"));
}

TEST_CASE("A SpatialAlignment cuts units as evenly as samples and gives the rest to the last rank",
          "[parallel][alignment]") {
  parallel::SpatialAlignment a;
  CHECK(a.boundary(0, 13, 3, 1) == 4);
  CHECK(a.boundary(0, 13, 3, 2) == 9);
  CHECK(a.boundary(0, 13, 3, 3) == 13);
  a.set(0, 14, 4);  // 3 units and 2 planes over
  CHECK(a.of(0, 14) == 4);
  CHECK(a.of(1, 14) == 1);
  CHECK(a.boundary(0, 14, 3, 1) == 4);
  CHECK(a.boundary(0, 14, 3, 2) == 8);
  CHECK(a.boundary(0, 14, 3, 3) == 14);
  CHECK(a.fits(0, 14, 3));
  CHECK_FALSE(a.fits(0, 14, 4));
  CHECK_THAT(a.explain(0, 14, 4), Catch::Contains("depth 14 cannot split over 4 ranks in blocks aligned to 4"));
  a.set(0, 14, 1);
  CHECK(a.all()[0].empty());
  CHECK_THROWS_AS(a.set(0, 14, 0), Error);
}
