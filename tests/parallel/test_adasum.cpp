#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tessera/core/rng.hpp"
#include "tessera/parallel/adasum.hpp"
#include "tessera/parallel/gradient_reducer.hpp"

using namespace tessera;

namespace {

Tensor tensor_of(const std::vector<float>& values) {
  Tensor t(Shape{static_cast<int64_t>(values.size())});
  t.copy_from_host(values);
  return t;
}

std::vector<float> combined(const std::vector<float>& a, const std::vector<float>& b, std::vector<int64_t> offsets) {
  parallel::Adasum adasum(parallel::Communicator::self(), std::move(offsets), "test");
  const Tensor ta = tensor_of(a), tb = tensor_of(b), out(Shape{static_cast<int64_t>(a.size())});
  adasum.combine(ta, tb, out);
  return out.to_host();
}

}  // namespace

TEST_CASE("Adasum's weights follow the pairwise formula and give a zero vector weight 1", "[parallel][adasum]") {
  // a·b = 1, ‖a‖² = 5, ‖b‖² = 11.
  const auto w = parallel::adasum_weights(1.0, 5.0, 11.0);
  CHECK(w.a == Approx(0.9).epsilon(1e-15));
  CHECK(w.b == Approx(21.0 / 22.0).epsilon(1e-15));
  const auto zero_a = parallel::adasum_weights(0.0, 0.0, 4.0);
  CHECK(zero_a.a == 1.0);
  CHECK(zero_a.b == 1.0);
}

TEST_CASE("Adasum of a hand-computed pair", "[parallel][adasum]") {
  // a = (1, 0, 2), b = (3, 1, -1): a·b = 1, ‖a‖² = 5, ‖b‖² = 11, so the result is
  // 0.9·a + (21/22)·b = (3.763636…, 0.954545…, 0.845454…).
  const auto r = combined({1, 0, 2}, {3, 1, -1}, {0, 3});
  REQUIRE(r.size() == 3);
  CHECK(r[0] == Approx(3.7636363636).epsilon(1e-7));
  CHECK(r[1] == Approx(0.9545454545).epsilon(1e-7));
  CHECK(r[2] == Approx(0.8454545455).epsilon(1e-7));
}

TEST_CASE("Adasum of orthogonal vectors is their sum, of equal vectors the vector itself", "[parallel][adasum]") {
  CHECK(combined({1, 2, 0, 0}, {0, 0, 3, -4}, {0, 4}) == std::vector<float>{1, 2, 3, -4});
  // Both weights are exactly 1/2 here, so the result is exact.
  CHECK(combined({0.5f, -1.5f, 2.0f}, {0.5f, -1.5f, 2.0f}, {0, 3}) == std::vector<float>{0.5f, -1.5f, 2.0f});
  // Opposite vectors cancel: each weight is 3/2.
  CHECK(combined({1, -2}, {-1, 2}, {0, 2}) == std::vector<float>{0, 0});
}

TEST_CASE("Adasum with a zero vector is a plain sum", "[parallel][adasum]") {
  CHECK(combined({0, 0, 0}, {1, 2, 3}, {0, 3}) == std::vector<float>{1, 2, 3});
  CHECK(combined({1, 2, 3}, {0, 0, 0}, {0, 3}) == std::vector<float>{1, 2, 3});
  CHECK(combined({0, 0}, {0, 0}, {0, 2}) == std::vector<float>{0, 0});
}

TEST_CASE("Adasum applies its rule to each segment on its own", "[parallel][adasum]") {
  // Segment 0 holds an orthogonal pair (summed), segment 1 an equal pair (kept); over the
  // whole buffer the pair is neither, and the rule would give something else.
  const std::vector<float> a{1, 0, 2, 4}, b{0, 3, 2, 4};
  CHECK(combined(a, b, {0, 2, 4}) == std::vector<float>{1, 3, 2, 4});
  const auto whole = combined(a, b, {0, 4});
  CHECK(whole[0] != Approx(1.0f));
  // An empty segment in between changes nothing.
  CHECK(combined(a, b, {0, 2, 2, 4}) == std::vector<float>{1, 3, 2, 4});
}

TEST_CASE("Adasum over long segments matches the formula evaluated in double", "[parallel][adasum]") {
  // Segments longer than one chunk of the partial dot products, and one of odd length.
  const std::vector<int64_t> offsets{0, 5000, 5003, 12289};
  const auto n = static_cast<size_t>(offsets.back());
  std::vector<float> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    const float common = rng::normal(3, 1, i);
    a[i] = common + 0.5f * rng::normal(3, 2, i);
    b[i] = common + 0.5f * rng::normal(3, 3, i);
  }
  const auto r = combined(a, b, offsets);
  double worst = 0.0;
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    double dot = 0, aa = 0, bb = 0;
    for (auto i = static_cast<size_t>(offsets[s]); i < static_cast<size_t>(offsets[s + 1]); ++i) {
      dot += static_cast<double>(a[i]) * b[i];
      aa += static_cast<double>(a[i]) * a[i];
      bb += static_cast<double>(b[i]) * b[i];
    }
    const double wa = 1 - dot / (2 * aa), wb = 1 - dot / (2 * bb);
    for (auto i = static_cast<size_t>(offsets[s]); i < static_cast<size_t>(offsets[s + 1]); ++i)
      worst = std::max(worst, std::abs(r[i] - (wa * a[i] + wb * b[i])));
  }
  CHECK(worst < 1e-6);
}

TEST_CASE("Adasum refuses buffers of the wrong size and offsets that decrease", "[parallel][adasum]") {
  parallel::Adasum adasum(parallel::Communicator::self(), {0, 3}, "test");
  const Tensor three(Shape{3}), four(Shape{4});
  CHECK_THROWS_AS(adasum.combine(three, four, three), ShapeError);
  CHECK_THROWS_AS(adasum.allreduce(four), ShapeError);
  CHECK_THROWS_AS(parallel::Adasum(parallel::Communicator::self(), {0, 3, 2}, "test"), Error);
  CHECK_THROWS_AS(parallel::GradientReducer(four, parallel::Adasum(parallel::Communicator::self(), {0, 3}, "test")),
                  Error);
}

TEST_CASE("On one rank Adasum leaves the gradient as it is", "[parallel][adasum]") {
  const Tensor g = tensor_of({1.5f, -2.0f, 0.25f});
  parallel::GradientReducer reducer(g, parallel::Adasum(parallel::Communicator::self(), {0, 1, 3}, "test"));
  reducer.ready_from(0);
  reducer.finish();
  CHECK(g.to_host() == std::vector<float>{1.5f, -2.0f, 0.25f});
}
