#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/layers/parameter_shard.hpp"

using namespace tessera;

namespace {

layers::ParameterShard shard(const Shape& whole, int axis, int parts, int index) {
  return layers::ParameterShard::slices(whole, axis, parts, index);
}

}  // namespace

TEST_CASE("A parameter shard is its slice of the whole along its axis", "[layers][shard]") {
  // A dense weight [units 4, features 6]: a filter split slices rows, a channel split columns.
  const Shape whole{4, 6};
  const auto rows = shard(whole, 0, 2, 1), columns = shard(whole, 1, 3, 2);
  CHECK(rows.local_shape("w") == Shape{2, 6});
  CHECK(columns.local_shape("w") == Shape{4, 2});
  CHECK(rows.whole_index(0) == 12);     // row 2, column 0
  CHECK(rows.whole_index(7) == 19);     // row 3, column 1
  CHECK(columns.whole_index(0) == 4);   // row 0, column 4
  CHECK(columns.whole_index(3) == 11);  // row 1, column 5
  std::vector<float> values(24);
  std::iota(values.begin(), values.end(), 0.0f);
  CHECK(columns.slice_of(values) == std::vector<float>{4, 5, 10, 11, 16, 17, 22, 23});
  CHECK(rows.slice_of(values) == std::vector<float>{12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
}

TEST_CASE("Every element of a whole parameter belongs to exactly one shard", "[layers][shard]") {
  // A conv weight [filters 4, 3, 3, 3, channels 2] split by input channel over 2 ranks.
  const Shape whole{4, 3, 3, 3, 2};
  std::vector<int> seen(static_cast<size_t>(whole.numel()), 0);
  for (int index = 0; index < 2; ++index) {
    const auto s = shard(whole, 4, 2, index);
    for (int64_t i = 0; i < s.local_shape("w").numel(); ++i) ++seen[static_cast<size_t>(s.whole_index(i))];
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

TEST_CASE("Shards of an axis the parts do not divide differ by one row and cover every element once",
          "[layers][shard]") {
  // A conv weight [filters 5, 3, 3, 3, channels 2] split by filter over 3 ranks: 2/1/2 filters
  // (even_boundary: 5·1/3 rounds to 2, 5·2/3 to 3).
  const Shape whole{5, 3, 3, 3, 2};
  std::vector<int> seen(static_cast<size_t>(whole.numel()), 0);
  std::vector<int64_t> filters;
  for (int index = 0; index < 3; ++index) {
    const auto s = shard(whole, 0, 3, index);
    filters.push_back(s.local_shape("w")[0]);
    for (int64_t i = 0; i < s.local_shape("w").numel(); ++i) ++seen[static_cast<size_t>(s.whole_index(i))];
  }
  CHECK(filters == std::vector<int64_t>{2, 1, 2});
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  // The middle shard's slice is filter 2's 54 values.
  std::vector<float> values(static_cast<size_t>(whole.numel()));
  std::iota(values.begin(), values.end(), 0.0f);
  const std::vector<float> middle = shard(whole, 0, 3, 1).slice_of(values);
  REQUIRE(middle.size() == 54);
  CHECK(middle.front() == 108.0f);
  CHECK(middle.back() == 161.0f);
}

TEST_CASE("A parameter with fewer rows than shards is a ShapeError naming it", "[layers][shard]") {
  CHECK_THROWS_WITH(shard(Shape{1, 2}, 0, 2, 0).local_shape("parameter 'fc.weight'"),
                    Catch::Contains("parameter 'fc.weight'") && Catch::Contains("cannot split into 2 parts"));
}

TEST_CASE("An unsplit parameter is its whole self, gathering and slicing nothing", "[layers][shard]") {
  layers::ParameterShard whole;
  whole.whole = Shape{3};
  CHECK_FALSE(whole.split());
  CHECK(whole.local_shape("b") == Shape{3});
  CHECK(whole.whole_index(2) == 2);
  CHECK(whole.gather_whole({1, 2, 3}) == std::vector<float>{1, 2, 3});
  CHECK(whole.slice_of({1, 2, 3}) == std::vector<float>{1, 2, 3});
}

TEST_CASE("A 2-D shard is a block: a range of one axis and a set of ranges of another", "[layers][shard]") {
  // A dense weight [units 6, features 4] over a 2 x 2 grid: member (i, j) holds features
  // [2i, 2i + 2) of the units in slices j and 2 + j of 4 (units {0}, {2} for j = 0 by
  // even_boundary(6, 4, ·) = 0, 2, 3, 5, 6: slices {0,1}, {2}, {3,4}, {5}).
  layers::ParameterShard s;
  s.whole = Shape{6, 4};
  s.axes = {1, 0};
  const std::vector<std::vector<int64_t>> columns{{0, 1, 3, 4}, {2, 5}};
  for (int q = 0; q < 4; ++q) s.held.push_back({layers::ParameterShard::range(2 * (q / 2), 2), columns[q % 2]});
  std::vector<int> seen(24, 0);
  for (int q = 0; q < 4; ++q)
    for (int64_t i = 0; i < s.member_shape(q, "w").numel(); ++i)
      ++seen[static_cast<size_t>(s.member_whole_index(q, i))];
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  s.index = 3;  // row 1, column 1: units 2 and 5, features 2 and 3
  CHECK(s.local_shape("w") == Shape{2, 2});
  std::vector<float> values(24);
  std::iota(values.begin(), values.end(), 0.0f);
  CHECK(s.slice_of(values) == std::vector<float>{10, 11, 22, 23});
}

TEST_CASE("Sharded weights: each member holds a run of its block's elements, every element once", "[layers][shard]") {
  // The 2 x 2 block split of a [6, 4] weight above, each block further split over 3 replicas
  // (ShardedWeight): 12 members, block elements cut by even_boundary into runs of 2, 1, 1 or 1,
  // 2, 1 elements (a block of 4 elements over 3: boundaries 0, 1, 3, 4).
  layers::ParameterShard s;
  s.whole = Shape{6, 4};
  s.axes = {1, 0};
  const std::vector<std::vector<int64_t>> columns{{0, 1, 3, 4}, {2, 5}};
  for (int m = 0; m < 12; ++m) {
    const int q = m % 4, r = m / 4;
    s.held.push_back({layers::ParameterShard::range(2 * (q / 2), 2), columns[q % 2]});
    const int64_t elements = 2 * static_cast<int64_t>(columns[q % 2].size());
    const int64_t first = (2 * elements * r + 3) / 6, last = (2 * elements * (r + 1) + 3) / 6;
    s.run_first.push_back(first);
    s.run_count.push_back(last - first);
  }
  CHECK(s.parts() == 12);
  std::vector<int> seen(24, 0);
  for (int m = 0; m < 12; ++m) {
    CHECK(s.member_shape(m, "w").rank() == 1);
    for (int64_t i = 0; i < s.member_shape(m, "w").numel(); ++i)
      ++seen[static_cast<size_t>(s.member_whole_index(m, i))];
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  // Member 7: block 3 (features 2 and 3 of units 2 and 5, [[10, 11], [22, 23]] in the whole),
  // replica 1: its block's elements [1, 3) of 4.
  s.index = 7;
  CHECK(s.member_block_shape(7, "w") == Shape{2, 2});
  CHECK(s.local_shape("w") == Shape{2});
  std::vector<float> values(24);
  std::iota(values.begin(), values.end(), 0.0f);
  CHECK(s.slice_of(values) == std::vector<float>{11, 22});
}

TEST_CASE("Sharding a whole weight cuts it into runs of its elements", "[layers][shard]") {
  // No channel split: the whole [5, 2] weight is each replica's block (pure ZeRO stage 3).
  layers::ParameterShard s;
  s.whole = Shape{5, 2};
  s.run_first = {0, 3, 7};
  s.run_count = {3, 4, 3};
  CHECK(s.split());
  CHECK(s.parts() == 3);
  s.index = 1;
  CHECK(s.local_shape("w") == Shape{4});
  std::vector<float> values(10);
  std::iota(values.begin(), values.end(), 0.0f);
  CHECK(s.slice_of(values) == std::vector<float>{3, 4, 5, 6});
}
