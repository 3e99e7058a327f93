#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "support/index5.hpp"
#include "tessera/core/error.hpp"
#include "tessera/parallel/block_copy.hpp"

using namespace tessera;
using parallel::Array5;
using parallel::Index5;
using testing::for_each_index;
using testing::linear;
using testing::plus;

TEST_CASE("extents5_of views 2D activations with a depth of one, features as one voxel", "[parallel][block_copy]") {
  CHECK(parallel::extents5_of(Shape{2, 3, 4, 5, 6}) == Index5{2, 3, 4, 5, 6});
  CHECK(parallel::extents5_of(Shape{2, 4, 5, 6}) == Index5{2, 1, 4, 5, 6});
  CHECK(parallel::extents5_of(Shape{2, 6}) == Index5{2, 1, 1, 1, 6});
  CHECK_THROWS_WITH(parallel::extents5_of(Shape{2, 3, 6}), Catch::Contains("[2, 3, 6]"));
}

TEST_CASE("Sub-boxes are copied, added and filled between 5D arrays", "[parallel][block_copy]") {
  const Shape src_shape{2, 3, 4, 5, 3}, dst_shape{3, 4, 3, 6, 4};
  Tensor src(src_shape), dst(dst_shape);
  std::vector<float> s(static_cast<size_t>(src.numel())), d(static_cast<size_t>(dst.numel()));
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<float>(i + 1);
  for (size_t i = 0; i < d.size(); ++i) d[i] = -static_cast<float>(i);
  src.copy_from_host(s);
  dst.copy_from_host(d);
  const Array5 a = Array5::of(src), b = Array5::of(dst);
  const Index5 src_offset{1, 0, 1, 2, 1}, dst_offset{0, 2, 1, 3, 2}, extent{1, 2, 2, 3, 2};

  SECTION("copy") {
    parallel::copy_sub_box("test_copy", a, src_offset, b, dst_offset, extent);
    std::vector<float> expected = d;
    for_each_index(extent, [&](const Index5& i) {
      expected[static_cast<size_t>(linear(b.extents, plus(dst_offset, i)))] =
          s[static_cast<size_t>(linear(a.extents, plus(src_offset, i)))];
    });
    CHECK(dst.to_host() == expected);
  }
  SECTION("add") {
    parallel::add_sub_box("test_add", a, src_offset, b, dst_offset, extent);
    std::vector<float> expected = d;
    for_each_index(extent, [&](const Index5& i) {
      expected[static_cast<size_t>(linear(b.extents, plus(dst_offset, i)))] +=
          s[static_cast<size_t>(linear(a.extents, plus(src_offset, i)))];
    });
    CHECK(dst.to_host() == expected);
  }
  SECTION("fill") {
    parallel::fill_sub_box("test_fill", b, dst_offset, extent, 7.5f);
    std::vector<float> expected = d;
    for_each_index(
        extent, [&](const Index5& i) { expected[static_cast<size_t>(linear(b.extents, plus(dst_offset, i)))] = 7.5f; });
    CHECK(dst.to_host() == expected);
  }
  SECTION("into and out of a message buffer") {
    DeviceView<float> buffer("buffer", 100);
    const Array5 message = Array5::in_buffer(buffer, 10, extent);
    parallel::copy_sub_box("test_pack", a, src_offset, message, {0, 0, 0, 0, 0}, extent);
    parallel::copy_sub_box("test_unpack", message, {0, 0, 0, 0, 0}, b, dst_offset, extent);
    std::vector<float> expected = d;
    for_each_index(extent, [&](const Index5& i) {
      expected[static_cast<size_t>(linear(b.extents, plus(dst_offset, i)))] =
          s[static_cast<size_t>(linear(a.extents, plus(src_offset, i)))];
    });
    CHECK(dst.to_host() == expected);
    CHECK_THROWS_AS(Array5::in_buffer(buffer, 80, extent), ShapeError);
  }
  SECTION("boxes outside an array are refused, naming the kernel and the extents") {
    CHECK_THROWS_WITH(parallel::copy_sub_box("tessera::halo_pack", a, {1, 2, 1, 2, 1}, b, dst_offset, extent),
                      Catch::Contains("tessera::halo_pack") && Catch::Contains("[2, 3, 4, 5, 3]"));
    CHECK_THROWS_AS(parallel::fill_sub_box("test_fill", b, {0, 0, 0, 0, -1}, extent, 0.0f), ShapeError);
  }
}

TEST_CASE("Sub-boxes of 16-bit arrays move exactly, convert by rounding, and add in fp32 rounded once",
          "[parallel][block_copy][precision]") {
  const Shape shape{1, 2, 3, 4, 3};
  const Index5 offset{0, 1, 0, 1, 0}, extent{1, 1, 3, 2, 3};
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1.001f + static_cast<float>(i) / 3.0f;  // not 16-bit values
  for (const ElementType type : {ElementType::bf16, ElementType::fp16}) {
    INFO(element_type_name(type));
    const double u = unit_roundoff(type);
    Tensor f32(shape), half(shape, type), other(shape, type);
    f32.copy_from_host(v);
    const Array5 a = Array5::of(f32), h = Array5::of(half), o = Array5::of(other);
    CHECK(h.type == type);
    // fp32 -> 16-bit rounds each value to nearest (relative error within u) ...
    parallel::copy_sub_box("to_half", a, offset, h, offset, extent);
    const auto rounded = half.to_host();
    for_each_index(extent, [&](const Index5& i) {
      const auto k = static_cast<size_t>(linear(a.extents, plus(offset, i)));
      CHECK(std::abs(rounded[k] - v[k]) <= u * std::abs(v[k]));
      CHECK(rounded[k] != v[k]);  // these values are not representable: it did round
    });
    // ... between arrays of the same 16-bit type the patterns move unchanged ...
    parallel::copy_sub_box("half_to_half", h, offset, o, offset, extent);
    CHECK(other.to_host() == rounded);
    // ... and an addition is computed in fp32 and rounded once.
    parallel::add_sub_box("half_add", h, offset, o, offset, extent);
    const auto sums = other.to_host();
    for_each_index(extent, [&](const Index5& i) {
      const auto k = static_cast<size_t>(linear(a.extents, plus(offset, i)));
      CHECK(sums[k] == 2 * rounded[k]);  // doubling is exact
    });
    // A message buffer of words holds two 16-bit values a word.
    CHECK(parallel::words_for(7, type) == 4);
    DeviceView<float> words("words", 4);
    const Index5 seven{1, 1, 1, 1, 7};
    parallel::copy_sub_box("pack", h, {0, 0, 0, 0, 0}, Array5::in_buffer(words, 0, seven, type), {0, 0, 0, 0, 0},
                           {1, 1, 1, 1, 3});
    CHECK_THROWS_WITH(Array5::in_buffer(words, 1, seven, type), Catch::Contains("does not fit a buffer of 4 words"));
    // Max pooling's boundary, the lowest float, stays finite: the type's own lowest.
    parallel::fill_sub_box("fill", h, {0, 0, 0, 0, 0}, {1, 1, 1, 1, 1}, std::numeric_limits<float>::lowest());
    const float lowest = half.to_host()[0];
    CHECK(std::isfinite(lowest));
    CHECK(lowest == (type == ElementType::bf16 ? -3.3895313892515355e38f : -65504.0f));
  }
}
