#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/parallel/process_grid.hpp"

using namespace tessera;

TEST_CASE("A process grid of one rank owns every sample whole", "[parallel][grid]") {
  const parallel::ProcessGrid a;
  const parallel::ProcessGrid b(parallel::Distribution{}, parallel::Communicator::world(), "model.distribution");
  for (const auto* grid : {&a, &b}) {
    CHECK(grid->distribution().is_serial());
    CHECK(grid->all().size() == 1);
    CHECK(grid->spatial().size() == 1);
    CHECK(grid->samples().size() == 1);
    CHECK(grid->sample_index() == 0);
    CHECK(grid->spatial_index() == std::array<int, 3>{0, 0, 0});
    CHECK(grid->spatial_parts() == std::array<int, 3>{1, 1, 1});
    CHECK(grid->rank_of(0, {0, 0, 0}) == 0);
    CHECK(grid->spatial_rank_of({0, 0, 0}) == 0);
    CHECK(grid->local_box({5, 6, 7}, "x") == parallel::Box::whole({5, 6, 7}));
    CHECK(grid->local_box({5, 6, 7}, "x").str() == "[0:5, 0:6, 0:7]");
    CHECK(grid->local_batch(3, "x") == 3);
    CHECK(grid->first_sample(3, "x") == 0);
    CHECK(grid->local_shape(Shape{3, 5, 6, 7, 2}, "x") == Shape{3, 5, 6, 7, 2});
    CHECK(grid->local_shape(Shape{3, 6, 7, 2}, "x") == Shape{3, 6, 7, 2});
    CHECK(grid->local_shape(Shape{3, 10}, "x") == Shape{3, 10});
    CHECK(grid->global_shape(Shape{3, 5, 6, 7, 2}, 3) == Shape{3, 5, 6, 7, 2});
  }
}

TEST_CASE("A distribution that does not match the job's ranks is a ConfigError", "[parallel][grid]") {
  const auto world = parallel::Communicator::world();
  parallel::Distribution two;
  two.depth = 2;
  CHECK_THROWS_WITH(
      parallel::ProcessGrid(two, world, "model.layers[1].distribution"),
      Catch::Contains("model.layers[1].distribution") && Catch::Contains("needs 2 ranks but the job has 1"));
  parallel::Distribution channels;
  channels.channel = 2;
  CHECK_THROWS_WITH(parallel::ProcessGrid(channels, world, "d"), Catch::Contains("needs 2 ranks"));
  channels.filter = 2;  // a 2-D channel split of 4 ranks
  CHECK_THROWS_WITH(parallel::ProcessGrid(channels, world, "d"), Catch::Contains("needs 4 ranks"));
  parallel::Distribution none;
  none.sample = 0;
  CHECK_THROWS_WITH(parallel::ProcessGrid(none, world, "d"), Catch::Contains("count below 1"));
}

TEST_CASE("spatial_size_of reads (D, H, W) of 2D and 3D activations", "[parallel][grid]") {
  CHECK(parallel::spatial_size_of(Shape{2, 3, 4, 5, 6}) == std::array<int64_t, 3>{3, 4, 5});
  CHECK(parallel::spatial_size_of(Shape{2, 4, 5, 6}) == std::array<int64_t, 3>{1, 4, 5});
  CHECK_THROWS_AS(parallel::spatial_size_of(Shape{2, 6}), ShapeError);
}
