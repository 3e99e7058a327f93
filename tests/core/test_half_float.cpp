#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "tessera/core/error.hpp"
#include "tessera/core/half_float.hpp"
#include "tessera/core/tensor.hpp"

using namespace tessera;
namespace hf = tessera::half_float;

namespace {

/// bf16 by choosing the nearer of the two bf16 values around f (ties to the even one): an
/// implementation that shares no arithmetic with hf::to_bf16's carry trick.
uint16_t nearest_bf16(float f) {
  const uint32_t u = hf::bits_of(f);
  const uint16_t down = static_cast<uint16_t>(u >> 16), up = static_cast<uint16_t>(down + 1);
  const double d = std::fabs(static_cast<double>(f) - hf::from_bf16(down));
  const double e = std::fabs(static_cast<double>(f) - hf::from_bf16(up));
  if (d < e) return down;
  if (e < d) return up;
  return (down & 1) ? up : down;
}

std::vector<float> awkward_floats() {
  std::vector<float> v{0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.0f, 65520.0f, 1e5f, 6.1035156e-05f,
                       5.9604645e-08f, 2.9802322e-08f, 2.98e-08f, 1e-10f, 3.4e38f, 1.00390625f, 1.01171875f,
                       std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                       std::numeric_limits<float>::denorm_min()};
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const float f = hf::float_of(bits(rng));
    if (!std::isnan(f)) v.push_back(f);
  }
  std::uniform_real_distribution<float> small(-70000.0f, 70000.0f);
  for (int i = 0; i < 100000; ++i) v.push_back(small(rng) * (i % 2 ? 1.0f : 1e-6f));
  return v;
}

}  // namespace

TEST_CASE("bf16 rounds to nearest even like an independent nearest-value search", "[core][precision]") {
  for (const float f : awkward_floats()) {
    INFO(f);
    if (std::isinf(f)) {
      CHECK(hf::from_bf16(hf::to_bf16(f)) == f);
      continue;
    }
    // Values within half an ulp of bf16's largest finite value round up to infinity.
    if (std::fabs(f) >= 3.3961776e38f) continue;
    CHECK(hf::to_bf16(f) == nearest_bf16(f));
  }
  CHECK(std::isnan(hf::from_bf16(hf::to_bf16(std::nanf("")))));
  CHECK(hf::to_bf16(1.0f) == 0x3f80);
  CHECK(hf::from_bf16(0x3f81) == 1.0078125f);
}

TEST_CASE("fp16 conversion matches the compiler's _Float16 everywhere, subnormals and overflow included",
          "[core][precision]") {
  for (const float f : awkward_floats()) {
    INFO(f);
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t expected;
    std::memcpy(&expected, &h, 2);
    CHECK(hf::to_fp16(f) == expected);
    const float back = hf::from_fp16(expected);
    CHECK(hf::bits_of(back) == hf::bits_of(static_cast<float>(h)));
  }
  CHECK(std::isnan(hf::from_fp16(hf::to_fp16(std::nanf("")))));
  CHECK(hf::to_fp16(65520.0f) == 0x7c00);  // the tie above 65504 goes to infinity
  CHECK(hf::from_fp16(0x0001) == 0x1p-24f);
}

TEST_CASE("element types have names, sizes and unit roundoffs", "[core][precision]") {
  CHECK(parse_element_type("bf16") == ElementType::bf16);
  CHECK(!parse_element_type("fp8"));
  CHECK(element_size(ElementType::fp16) == 2);
  CHECK(unit_roundoff(ElementType::bf16) == 0x1p-8);
}

TEST_CASE("Tensors of 16-bit types store, convert, slice and refuse fp32 access", "[core][tensor][precision]") {
  for (const ElementType type : {ElementType::bf16, ElementType::fp16}) {
    INFO(element_type_name(type));
    Tensor t(Shape{2, 3}, type);
    CHECK(t.type() == type);
    CHECK(t.bytes() == 12);
    t.copy_from_host({1.0f, 2.0f, 3.0f, 1.0f / 3.0f, -5.5f, 1000.25f});
    const std::vector<float> got = t.to_host();
    CHECK(got[0] == 1.0f);
    CHECK(got[3] == hf::rounded(1.0f / 3.0f, type));
    CHECK(got[3] != 1.0f / 3.0f);
    CHECK(t.slice(4, Shape{2}).to_host() == std::vector<float>{got[4], got[5]});
    CHECK_THROWS_WITH(t.view(), Catch::Contains(std::string(element_type_name(type)) + " tensor"));
    CHECK_THROWS_AS(t.data(), Error);

    Tensor wide(Shape{6});
    deep_copy(wide, t);  // widening is exact
    CHECK(wide.to_host() == got);
    wide.copy_from_host({0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
    deep_copy(t, wide);  // narrowing rounds like the host conversion
    for (int i = 0; i < 6; ++i) CHECK(t.to_host()[static_cast<size_t>(i)] == hf::rounded(0.1f * (i + 1), type));
    const Tensor c = t.clone();
    CHECK(c.type() == type);
    CHECK(c.to_host() == t.to_host());
  }
  Tensor kept(Shape{4}, ElementType::bf16);
  const void* before = kept.raw_data();
  ensure_shape(kept, Shape{2, 2}, "kept", ElementType::bf16);
  CHECK(kept.raw_data() == before);
  ensure_shape(kept, Shape{2, 2}, "kept", ElementType::fp32);
  CHECK(kept.type() == ElementType::fp32);
  CHECK_THROWS_AS(Tensor(Shape{2}, ElementType::fp32).half_view(), Error);
}
