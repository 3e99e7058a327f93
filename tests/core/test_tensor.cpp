#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/core/tensor.hpp"

using namespace tessera;

TEST_CASE("Shape reports rank, extents and element count", "[core][shape]") {
  const Shape s{2, 3, 4, 5, 6};
  CHECK(s.rank() == 5);
  CHECK(s.numel() == 720);
  CHECK(s.str() == "[2, 3, 4, 5, 6]");
  CHECK(Shape{} .numel() == 1);
  CHECK(Shape{2, 3} != Shape{3, 2});
  CHECK_THROWS_AS(Shape({1, 2, 3, 4, 5, 6, 7}), ShapeError);
}

TEST_CASE("ActivationDims maps 2D and 3D activations onto N, D, H, W, C", "[core][shape]") {
  const auto a3 = ActivationDims::of(Shape{2, 5, 6, 7, 3});
  CHECK((a3.n == 2 && a3.d == 5 && a3.h == 6 && a3.w == 7 && a3.c == 3 && a3.spatial_rank == 3));
  const auto a2 = ActivationDims::of(Shape{2, 6, 7, 3});
  CHECK((a2.d == 1 && a2.h == 6 && a2.w == 7 && a2.spatial_rank == 2));
  CHECK(a2.to_shape() == Shape{2, 6, 7, 3});
  CHECK(ActivationDims::of(Shape{4, 9}).c == 9);
  CHECK_THROWS_WITH(ActivationDims::of(Shape{1, 2, 3}), Catch::Contains("[1, 2, 3]"));
}

TEST_CASE("Tensor copies to and from the host, fills, reshapes and slices", "[core][tensor]") {
  Tensor t(Shape{2, 3});
  CHECK(t.to_host() == std::vector<float>(6, 0.0f));
  t.copy_from_host({1, 2, 3, 4, 5, 6});
  const Tensor r = t.reshaped(Shape{3, 2});
  CHECK(r.data() == t.data());
  CHECK(r.to_host() == std::vector<float>{1, 2, 3, 4, 5, 6});
  const Tensor s = t.slice(2, Shape{2});
  CHECK(s.to_host() == std::vector<float>{3, 4});
  s.fill(9.0f);
  CHECK(t.to_host() == std::vector<float>{1, 2, 9, 9, 5, 6});
  const Tensor c = t.clone();
  c.fill(0.0f);
  CHECK(t.to_host()[0] == 1.0f);
  CHECK_THROWS_AS(t.reshaped(Shape{4}), ShapeError);
  CHECK_THROWS_AS(t.slice(5, Shape{2}), ShapeError);
  CHECK_THROWS_AS(t.copy_from_host({1, 2}), ShapeError);
}

TEST_CASE("ensure_shape reuses storage of equal size and reallocates otherwise", "[core][tensor]") {
  Tensor t;
  ensure_shape(t, Shape{4, 2}, "t");
  float* first = t.data();
  ensure_shape(t, Shape{2, 4}, "t");
  CHECK(t.data() == first);
  CHECK(t.shape() == Shape{2, 4});
  ensure_shape(t, Shape{3, 4}, "t");
  CHECK(t.numel() == 12);
}

TEST_CASE("a shape whose element count overflows 64 bits is an error, not a wrapped count", "[shape]") {
  const tessera::Shape s{4096, 4096, 4096, 1000000000};
  CHECK_THROWS_WITH(s.numel(), Catch::Contains("[4096, 4096, 4096, 1000000000] holds more elements than a 64-bit count"));
  CHECK(tessera::Shape{4096, 4096, 4096, 4}.numel() == int64_t{274877906944});
}
