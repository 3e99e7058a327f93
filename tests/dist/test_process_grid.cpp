#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/dist/process_grid.hpp"

using namespace tessera;

TEST_CASE("A process grid of one rank owns every sample whole", "[dist][grid]") {
  const dist::ProcessGrid a;
  const dist::ProcessGrid b(dist::Distribution{}, dist::Communicator::world(), "model.distribution");
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
    CHECK(grid->local_box({5, 6, 7}, "x") == dist::Box::whole({5, 6, 7}));
    CHECK(grid->local_box({5, 6, 7}, "x").str() == "[0:5, 0:6, 0:7]");
    CHECK(grid->local_batch(3, "x") == 3);
    CHECK(grid->first_sample(3, "x") == 0);
    CHECK(grid->local_shape(Shape{3, 5, 6, 7, 2}, "x") == Shape{3, 5, 6, 7, 2});
    CHECK(grid->local_shape(Shape{3, 6, 7, 2}, "x") == Shape{3, 6, 7, 2});
    CHECK(grid->local_shape(Shape{3, 10}, "x") == Shape{3, 10});
    CHECK(grid->global_shape(Shape{3, 5, 6, 7, 2}) == Shape{3, 5, 6, 7, 2});
  }
}

TEST_CASE("A distribution that does not match the job's ranks is a ConfigError", "[dist][grid]") {
  const auto world = dist::Communicator::world();
  dist::Distribution two;
  two.depth = 2;
  CHECK_THROWS_WITH(
      dist::ProcessGrid(two, world, "model.layers[1].distribution"),
      Catch::Contains("model.layers[1].distribution") && Catch::Contains("needs 2 ranks but the job has 1"));
  dist::Distribution channels;
  channels.channel = 2;
  CHECK_THROWS_WITH(dist::ProcessGrid(channels, world, "d"), Catch::Contains("splits channels"));
  dist::Distribution none;
  none.sample = 0;
  CHECK_THROWS_WITH(dist::ProcessGrid(none, world, "d"), Catch::Contains("count below 1"));
}

TEST_CASE("spatial_size_of reads (D, H, W) of 2D and 3D activations", "[dist][grid]") {
  CHECK(dist::spatial_size_of(Shape{2, 3, 4, 5, 6}) == std::array<int64_t, 3>{3, 4, 5});
  CHECK(dist::spatial_size_of(Shape{2, 4, 5, 6}) == std::array<int64_t, 3>{1, 4, 5});
  CHECK_THROWS_AS(dist::spatial_size_of(Shape{2, 6}), ShapeError);
}
