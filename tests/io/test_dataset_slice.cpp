#include <catch2/catch.hpp>

#include <memory>

#include "tessera/core/error.hpp"
#include "tessera/io/dataset_slice.hpp"
#include "tessera/io/synthetic_fields.hpp"

using namespace tessera;

namespace {
std::shared_ptr<io::Dataset> fields(int64_t samples) {
  io::SyntheticFields::Options o;
  o.samples = samples;
  o.size = 4;
  o.channels = 2;
  o.seed = 7;
  return std::make_shared<io::SyntheticFields>(o);
}
}  // namespace

TEST_CASE("A dataset slice serves its base's samples renumbered from its first", "[io]") {
  const auto base = fields(10);
  io::DatasetSlice slice(base, 6, 3, "$.training.ltfb");
  CHECK(slice.size() == 3);
  CHECK(slice.sample_shape() == base->sample_shape());
  CHECK(slice.target_shape() == base->target_shape());
  Tensor xs(Shape{2, 4, 4, 4, 2}), ys(Shape{2, 4}), xb(Shape{2, 4, 4, 4, 2}), yb(Shape{2, 4});
  slice.load({2, 0}, slice.whole_box(), xs, ys);
  base->load({8, 6}, base->whole_box(), xb, yb);
  CHECK(xs.to_host() == xb.to_host());
  CHECK(ys.to_host() == yb.to_host());
  CHECK_THAT(slice.describe(), Catch::StartsWith("samples 6..8 of "));
}

TEST_CASE("A dataset slice refuses indices and ranges outside itself", "[io]") {
  const auto base = fields(10);
  io::DatasetSlice slice(base, 0, 5, "$.where");
  Tensor x(Shape{1, 4, 4, 4, 2}), y(Shape{1, 4});
  // Sample 5 exists in the base but belongs to the next slice.
  CHECK_THROWS_WITH(slice.load({5}, slice.whole_box(), x, y), Catch::Contains("outside its 5 samples"));
  CHECK_THROWS_WITH(slice.load({-1}, slice.whole_box(), x, y), Catch::Contains("outside"));
  CHECK_THROWS_WITH(io::DatasetSlice(base, 8, 3, "$.where"), Catch::Contains("$.where") && Catch::Contains("[8, 11)"));
  CHECK_THROWS_AS(io::DatasetSlice(base, 0, 0, "$.where"), ConfigError);
  CHECK_THROWS_AS(io::DatasetSlice(base, -1, 2, "$.where"), ConfigError);
}
