// Connected components against small volumes labelled by hand.
#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/eval/connected_components.hpp"

using tessera::Error;
using tessera::eval::connected_components;
using tessera::eval::count_objects;
using tessera::eval::Labels;

TEST_CASE("components join voxels that share a face, not an edge, numbered by first voxel", "[eval][components]") {
  // One slice of 3 x 4:   1 1 0 1
  //                       0 0 0 1
  //                       1 0 1 0   ((2,2) touches (1,3) only along an edge)
  const std::vector<uint8_t> mask{1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0};
  const Labels labels = connected_components(mask, {1, 3, 4});
  CHECK(labels == Labels{1, 1, 0, 2, 0, 0, 0, 2, 3, 0, 4, 0});
  CHECK(count_objects(labels) == 4);
  // Specks below 2 voxels stay unlabelled; the rest keep their order.
  CHECK(connected_components(mask, {1, 3, 4}, 2) == Labels{1, 1, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0});
}

TEST_CASE("components join along depth, and branches that meet late become one", "[eval][components]") {
  // Two columns that meet only in the second slice: z0 = 1 0, z1 = 1 1.
  CHECK(connected_components({1, 0, 1, 1}, {2, 1, 2}) == Labels{1, 0, 1, 1});
  // A U: the right arm starts a component of its own in scan order and is joined below.
  //   1 0 1
  //   1 1 1
  CHECK(connected_components({1, 0, 1, 1, 1, 1}, {1, 2, 3}) == Labels{1, 0, 1, 1, 1, 1});
  CHECK(connected_components({0, 0, 0, 0}, {1, 2, 2}) == Labels{0, 0, 0, 0});
}

TEST_CASE("connected components refuse a mask of the wrong size", "[eval][components]") {
  CHECK_THROWS_AS(connected_components({1, 1, 1}, {1, 2, 2}), Error);
  CHECK_THROWS_WITH(connected_components({1, 1, 1}, {1, 2, 2}), Catch::Contains("3 voxels is not 1x2x2"));
}
