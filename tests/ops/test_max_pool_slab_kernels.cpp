// The fused convolution + max pooling's slab kernels against plain loops written here: the
// pooled maxima and their window positions (first of equals), the gradient rebuilt from them,
// and the slab-gradient sum.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/gradient_check.hpp"
#include "tessera/backends/kokkos/max_pool_slab_kernels.hpp"

namespace {

using tessera::Shape;
using tessera::Tensor;
using tessera::kokkos_backend::MaxPoolSlabLayout;
using tessera::kokkos_backend::SlabArgmax;
using tessera::testing::random_vector;

/// A slab whose height and width leave a row and a column that no window covers, whose
/// channels end in a partial group, and whose output starts past the layer output's start.
MaxPoolSlabLayout layout() {
  MaxPoolSlabLayout s{};
  s.rows = 4, s.h = 5, s.w = 7, s.c = 11;
  s.kd = 2, s.kh = 2, s.kw = 3;
  s.pooled_rows = s.rows / s.kd, s.ph = s.h / s.kh, s.pw = s.w / s.kw;
  s.out_offset = 3 * s.ph * s.pw * s.c;
  return s;
}

int64_t slab_index(const MaxPoolSlabLayout& s, int64_t r, int64_t h, int64_t w, int64_t c) {
  return ((r * s.h + h) * s.w + w) * s.c + c;
}

int64_t pooled_index(const MaxPoolSlabLayout& s, int64_t pr, int64_t ph, int64_t pw, int64_t c) {
  return s.out_offset + ((pr * s.ph + ph) * s.pw + pw) * s.c + c;
}

std::vector<uint8_t> to_host(const SlabArgmax& a) {
  std::vector<uint8_t> v(a.extent(0));
  Kokkos::View<uint8_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(v.data(), v.size());
  Kokkos::deep_copy(h, a);
  return v;
}

/// Values from a handful of levels, so that windows hold ties.
std::vector<float> slab_values(const MaxPoolSlabLayout& s) {
  auto v = random_vector<float>(static_cast<size_t>(s.rows * s.h * s.w * s.c), 5u, -3.0, 3.0);
  for (auto& e : v) e = std::round(e);
  return v;
}

}  // namespace

TEST_CASE("max_pool_slab_forward takes each window's maximum and its first position", "[max_pool_slab][kernels]") {
  // The slab's values are small integers, which bf16 holds exactly: both types give the same.
  for (const tessera::ElementType type : {tessera::ElementType::fp32, tessera::ElementType::bf16}) {
  INFO(tessera::element_type_name(type));
  const MaxPoolSlabLayout s = layout();
  const auto x = slab_values(s);
  const int64_t outputs = s.out_offset + s.pooled_rows * s.ph * s.pw * s.c;
  Tensor slab(Shape{static_cast<int64_t>(x.size())}, type), y(Shape{outputs}, type);
  slab.copy_from_host(x);
  y.fill(-100.0f);
  SlabArgmax argmax("argmax", static_cast<size_t>(outputs));
  tessera::kokkos_backend::max_pool_slab_forward(slab, y, argmax, s);
  const auto got = y.to_host();
  const auto at = to_host(argmax);

  int64_t ties = 0;
  for (int64_t i = 0; i < s.out_offset; ++i) REQUIRE(got[static_cast<size_t>(i)] == -100.0f);  // not the slab's
  for (int64_t pr = 0; pr < s.pooled_rows; ++pr)
    for (int64_t ph = 0; ph < s.ph; ++ph)
      for (int64_t pw = 0; pw < s.pw; ++pw)
        for (int64_t c = 0; c < s.c; ++c) {
          float best = -std::numeric_limits<float>::infinity();
          int position = -1, a = 0, equal = 0;
          for (int64_t d = 0; d < s.kd; ++d)
            for (int64_t h = 0; h < s.kh; ++h)
              for (int64_t w = 0; w < s.kw; ++w, ++a) {
                const float v = x[static_cast<size_t>(slab_index(s, pr * s.kd + d, ph * s.kh + h, pw * s.kw + w, c))];
                if (v > best) {
                  best = v;
                  position = a;
                  equal = 0;
                }
                if (v == best) ++equal;
              }
          ties += equal > 1;
          const auto o = static_cast<size_t>(pooled_index(s, pr, ph, pw, c));
          REQUIRE(got[o] == best);
          REQUIRE(static_cast<int>(at[o]) == position);
        }
  CHECK(ties > 0);  // the first-of-equals rule was exercised
  }
}

TEST_CASE("max_pool_slab_backward sends each gradient to its window's maximum", "[max_pool_slab][kernels]") {
  for (const tessera::ElementType type : {tessera::ElementType::fp32, tessera::ElementType::bf16}) {
  INFO(tessera::element_type_name(type));
  const MaxPoolSlabLayout s = layout();
  const auto x = slab_values(s);
  const int64_t outputs = s.out_offset + s.pooled_rows * s.ph * s.pw * s.c;
  Tensor slab(Shape{static_cast<int64_t>(x.size())}, type), y(Shape{outputs}, type), dy(Shape{outputs}, type);
  slab.copy_from_host(x);
  SlabArgmax argmax("argmax", static_cast<size_t>(outputs));
  tessera::kokkos_backend::max_pool_slab_forward(slab, y, argmax, s);
  dy.copy_from_host(random_vector<float>(static_cast<size_t>(outputs), 6u));
  const auto d = dy.to_host();  // as the type holds them
  Tensor grad(Shape{static_cast<int64_t>(x.size())}, type);
  grad.fill(std::numeric_limits<float>::quiet_NaN());  // every element must be written
  tessera::kokkos_backend::max_pool_slab_backward(dy, argmax, grad, s);
  const auto got = grad.to_host();
  const auto at = to_host(argmax);

  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t h = 0; h < s.h; ++h)
      for (int64_t w = 0; w < s.w; ++w)
        for (int64_t c = 0; c < s.c; ++c) {
          const int64_t pr = r / s.kd, ph = h / s.kh, pw = w / s.kw;
          float expected = 0.0f;
          if (pr < s.pooled_rows && ph < s.ph && pw < s.pw) {
            const auto o = static_cast<size_t>(pooled_index(s, pr, ph, pw, c));
            const int64_t a = ((r % s.kd) * s.kh + h % s.kh) * s.kw + w % s.kw;
            if (at[o] == a) expected = d[o];
          }
          REQUIRE(got[static_cast<size_t>(slab_index(s, r, h, w, c))] == expected);
        }
  }
}

TEST_CASE("add_slab_gradient adds a part into the sum", "[max_pool_slab][kernels]") {
  const auto a = random_vector<float>(1000, 7u), b = random_vector<float>(1000, 8u);
  Tensor sum(Shape{1000}), part(Shape{1000});
  sum.copy_from_host(a);
  part.copy_from_host(b);
  tessera::kokkos_backend::add_slab_gradient(sum, part);
  const auto got = sum.to_host();
  for (size_t i = 0; i < a.size(); ++i) REQUIRE(got[i] == a[i] + b[i]);
  CHECK(part.to_host() == b);
}
