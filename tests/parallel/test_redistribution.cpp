#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/parallel/redistribution.hpp"

using namespace tessera;

TEST_CASE("On one rank a redistribution copies the whole activation both ways", "[parallel][redistribution]") {
  const parallel::ProcessGrid grid;
  const Shape global = GENERATE(Shape{2, 3, 4, 2, 3}, Shape{2, 4, 2, 3});
  parallel::Redistribution r(grid, grid, global, "flatten");
  CHECK(r.from_shape() == global);
  CHECK(r.to_shape() == global);
  Tensor x(global), y(global);
  std::vector<float> v(static_cast<size_t>(global.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) - 7.0f;
  x.copy_from_host(v);
  r.forward(x, y);
  CHECK(y.to_host() == v);
  x.zero();
  r.backward(y, x);
  CHECK(x.to_host() == v);
  Tensor wrong(Shape{1, 2});
  CHECK_THROWS_WITH(r.forward(wrong, y), Catch::Contains("flatten") && Catch::Contains("[1, 2]"));
  // Features move between sample and channel splits; on one rank that is a copy as well.
  parallel::Redistribution features(grid, grid, Shape{2, 5}, "dense");
  Tensor f(Shape{2, 5}), g(Shape{2, 5});
  const std::vector<float> w{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  f.copy_from_host(w);
  features.forward(f, g);
  CHECK(g.to_host() == w);
  CHECK_THROWS_AS(parallel::Redistribution(grid, grid, Shape{2, 3, 5}, "dense"), ShapeError);
}
