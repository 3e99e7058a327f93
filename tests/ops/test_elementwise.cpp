// The portable elementwise kernels: arithmetic, channel copies, dropout and the loss kernels.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <functional>

#include "support/gradient_check.hpp"
#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/half_float.hpp"
#include "tessera/core/rng.hpp"

using tessera::Shape;
using tessera::Tensor;
using tessera::testing::check_gradient;
using tessera::testing::random_vector;
namespace kokkos_backend = tessera::kokkos_backend;

namespace {

Tensor tensor(const Shape& shape, const std::vector<float>& values) {
  Tensor t(shape);
  t.copy_from_host(values);
  return t;
}

}  // namespace

TEST_CASE("axpby, add and the double reductions", "[elementwise]") {
  const Tensor x = tensor(Shape{2, 2}, {1.0f, 2.0f, 3.0f, 4.0f});
  const Tensor y = tensor(Shape{4}, {0.5f, -1.0f, 2.0f, 0.0f});
  Tensor z(Shape{2, 2});
  kokkos_backend::add(x, y, z);
  CHECK(z.to_host() == std::vector<float>{1.5f, 1.0f, 5.0f, 4.0f});
  kokkos_backend::axpby(2.0f, x, -1.0f, z);
  CHECK(z.to_host() == std::vector<float>{0.5f, 3.0f, 1.0f, 4.0f});
  CHECK(kokkos_backend::sum(x) == 10.0);
  CHECK(kokkos_backend::sum_squares(x) == 30.0);
  CHECK(kokkos_backend::dot(x, y) == 4.5);
  CHECK_THROWS_AS(kokkos_backend::add(x, Tensor(Shape{3}), z), tessera::ShapeError);

  // Accumulation in double keeps what float accumulation would round away, in any order.
  const Tensor cancelling = tensor(Shape{3}, {1e8f, 1.0f, -1e8f});
  CHECK(kokkos_backend::sum(cancelling) == 1.0);
  const Tensor wide = tensor(Shape{2}, {1e4f, 1.0f});
  CHECK(kokkos_backend::sum_squares(wide) == 100000001.0);
  CHECK(kokkos_backend::dot(wide, wide) == 100000001.0);
}

TEST_CASE("copy_channels writes and reads a channel block", "[elementwise]") {
  const Tensor a = tensor(Shape{2, 1, 1, 2}, {1, 2, 3, 4});
  const Tensor b = tensor(Shape{2, 1, 1, 1}, {9, 8});
  Tensor out(Shape{2, 1, 1, 3});
  kokkos_backend::copy_channels(a, out, 0, true);
  kokkos_backend::copy_channels(b, out, 2, true);
  CHECK(out.to_host() == std::vector<float>{1, 2, 9, 3, 4, 8});
  Tensor back(Shape{2, 1, 1, 1});
  kokkos_backend::copy_channels(back, out, 1, false);
  CHECK(back.to_host() == std::vector<float>{2, 4});
  CHECK_THROWS_AS(kokkos_backend::copy_channels(a, out, 2, true), tessera::ShapeError);
  CHECK_THROWS_AS(kokkos_backend::copy_channels(tensor(Shape{3, 1, 1, 1}, {1, 2, 3}), out, 0, true),
                  tessera::ShapeError);
}

TEST_CASE("copy_channel_blocks lays blocks side by side and hands them back, in fp32 and bf16",
          "[elementwise]") {
  using tessera::ElementType;
  for (const ElementType type : {ElementType::fp32, ElementType::bf16}) {
    INFO(tessera::element_type_name(type));
    // 11 blocks (more than one kernel's 8), channels 1..3 each, 5 rows; values exact in bf16.
    std::vector<Tensor> parts;
    std::vector<int64_t> offsets;
    int64_t channels = 0;
    for (int k = 0; k < 11; ++k) {
      const int64_t c = 1 + k % 3;
      std::vector<float> v(static_cast<size_t>(5 * c));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(100 * k + static_cast<int>(i));
      Tensor t(Shape{5, c}, type);
      t.copy_from_host(v);
      parts.push_back(t);
      offsets.push_back(channels);
      channels += c;
    }
    Tensor whole(Shape{5, channels}, type), expected(Shape{5, channels}, type);
    kokkos_backend::copy_channel_blocks(parts, offsets, whole, true);
    for (size_t k = 0; k < parts.size(); ++k) kokkos_backend::copy_channels(parts[k], expected, offsets[k], true);
    CHECK(whole.to_host() == expected.to_host());

    // Back out, block 4 empty (a concatenated input with no gradient): the others filled, poisoned first.
    std::vector<Tensor> back;
    for (size_t k = 0; k < parts.size(); ++k) {
      back.push_back(k == 4 ? Tensor() : Tensor(parts[k].shape(), type));
      if (k != 4) back.back().copy_from_host(std::vector<float>(static_cast<size_t>(parts[k].numel()), -1.0f));
    }
    kokkos_backend::copy_channel_blocks(back, offsets, whole, false);
    for (size_t k = 0; k < parts.size(); ++k)
      if (k != 4) CHECK(back[k].to_host() == parts[k].to_host());

    CHECK_THROWS_AS(kokkos_backend::copy_channel_blocks({parts[0]}, {channels}, whole, true), tessera::ShapeError);
    CHECK_THROWS_AS(kokkos_backend::copy_channel_blocks(parts, {0}, whole, true), tessera::Error);
  }
}

TEST_CASE("add, accumulate and copy_channels on bf16 tensors compute in fp32 and round once",
          "[elementwise][precision]") {
  using tessera::ElementType;
  const auto bf16 = [](const Shape& shape, const std::vector<float>& v) {
    Tensor t(shape, ElementType::bf16);
    t.copy_from_host(v);
    return t;
  };
  const auto rounded = [](float v) { return tessera::half_float::rounded(v, ElementType::bf16); };
  // 1 + 2^-8 is not a bf16 value: the sum rounds (to even, 1), as one fp32 sum rounded would.
  const Tensor x = bf16(Shape{4}, {1.0f, 0.5f, -3.0f, 100.0f});
  const Tensor y = bf16(Shape{4}, {0x1p-8f, 0.25f, 1.0f, 0.75f});
  Tensor z(Shape{4}, ElementType::bf16);
  kokkos_backend::add(x, y, z);
  CHECK(z.to_host() == std::vector<float>{rounded(1.0f + 0x1p-8f), 0.75f, -2.0f, rounded(100.75f)});
  kokkos_backend::accumulate(x, z);  // z += x
  CHECK(z.to_host() == std::vector<float>{2.0f, 1.25f, -5.0f, rounded(rounded(100.75f) + 100.0f)});

  Tensor out(Shape{2, 1, 1, 3}, ElementType::bf16);
  kokkos_backend::copy_channels(bf16(Shape{2, 1, 1, 2}, {1, 2, 3, 4}), out, 0, true);
  kokkos_backend::copy_channels(bf16(Shape{2, 1, 1, 1}, {9, 8}), out, 2, true);
  CHECK(out.to_host() == std::vector<float>{1, 2, 9, 3, 4, 8});
  CHECK_THROWS_WITH(kokkos_backend::copy_channels(tensor(Shape{2, 1, 1, 1}, {9, 8}), out, 2, true),
                    Catch::Contains("a block of fp32 and a tensor of bf16"));
}

TEST_CASE("dropout keeps about 1 − p, scales by 1/(1 − p) and reproduces its mask", "[elementwise][dropout]") {
  const int64_t n = 100000;
  Tensor x(Shape{n});
  x.fill(1.0f);
  Tensor y(Shape{n}), y2(Shape{n}), other(Shape{n});
  const float p = 0.3f;
  const uint64_t seed = 5, stream = tessera::rng::stream_of("drop");
  kokkos_backend::dropout_forward(x, p, seed, stream, y);
  kokkos_backend::dropout_forward(x, p, seed, stream, y2);
  kokkos_backend::dropout_forward(x, p, seed, stream + 1, other);
  const auto v = y.to_host();
  const auto v2 = y2.to_host();
  const auto vo = other.to_host();
  int64_t kept = 0, same_as_other = 0;
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    CHECK((v[k] == 0.0f || v[k] == Approx(1.0f / (1.0f - p))));
    kept += v[k] != 0.0f;
    same_as_other += (v[k] != 0.0f) == (vo[k] != 0.0f);
  }
  CHECK(v == v2);
  const double fraction = static_cast<double>(kept) / n;
  std::printf("[tolerance] dropout kernel: kept fraction %.4f for p = %.2f (expected 0.70 ± 0.01)\n", fraction, p);
  CHECK(fraction == Approx(0.7).margin(0.01));
  // Two independent masks agree on p² + (1−p)² = 58% of the elements.
  CHECK(static_cast<double>(same_as_other) / n == Approx(0.58).margin(0.01));

  // Backward applies the same mask to the gradient.
  Tensor dy(Shape{n}), dx(Shape{n});
  dy.copy_from_host(random_vector<float>(static_cast<size_t>(n), 3u));
  kokkos_backend::dropout_backward(dy, p, seed, stream, dx);
  const auto g = dy.to_host();
  const auto gx = dx.to_host();
  bool consistent = true;
  for (size_t k = 0; k < g.size(); ++k)
    consistent = consistent && gx[k] == (v[k] != 0.0f ? g[k] * (1.0f / (1.0f - p)) : 0.0f);
  CHECK(consistent);
  CHECK_THROWS_AS(kokkos_backend::dropout_forward(x, 1.0f, seed, stream, y), tessera::Error);
}

TEST_CASE("mse_loss against hand-computed values and finite differences", "[elementwise][loss]") {
  const Tensor pred = tensor(Shape{2, 2}, {1.0f, 2.0f, 3.0f, 5.0f});
  const Tensor target = tensor(Shape{2, 2}, {0.0f, 2.0f, 1.0f, 1.0f});
  Tensor grad(Shape{2, 2});
  // Σ d² = 1 + 0 + 4 + 16 = 21, over count 2 → 10.5; grad = 2d/2·0.5 = d/2.
  CHECK(kokkos_backend::mse_loss(pred, target, 2.0, 0.5f, grad) == Approx(10.5));
  CHECK(grad.to_host() == std::vector<float>{0.5f, 0.0f, 1.0f, 2.0f});
  CHECK(kokkos_backend::mse_loss(pred, target, 4.0, 1.0f, Tensor()) == Approx(5.25));

  auto p = random_vector<float>(12, 9u);
  const Tensor t = tensor(Shape{3, 4}, random_vector<float>(12, 10u));
  Tensor pt = tensor(Shape{3, 4}, p), g(Shape{3, 4});
  kokkos_backend::mse_loss(pt, t, 4.0, 1.0f, g);
  const auto check = check_gradient<float>(
      p, g.to_host(),
      [&](const std::vector<float>& v) {
        pt.copy_from_host(v);
        return kokkos_backend::mse_loss(pt, t, 4.0, 1.0f, Tensor());
      },
      1e-2, 1e-3);
  std::printf("[tolerance] mse_loss gradient (float): max_rel_error %.3g (limit 1e-3)\n", check.max_rel_error);
  INFO(check.str());
  CHECK(check.max_rel_error < 1e-3);
}

TEST_CASE("softmax_cross_entropy against hand-computed values", "[elementwise][loss]") {
  // Row 0: logits (0, ln 3) → p = (1/4, 3/4), label 1: loss −ln(3/4), correct.
  // Row 1: logits (2, 2)    → p = (1/2, 1/2), label 1: loss ln 2, arg-max (first) 0: wrong.
  const Tensor logits = tensor(Shape{2, 2}, {0.0f, std::log(3.0f), 2.0f, 2.0f});
  const Tensor labels = tensor(Shape{2}, {1.0f, 1.0f});
  Tensor grad(Shape{2, 2});
  int64_t correct = -1;
  const double loss = kokkos_backend::softmax_cross_entropy(logits, labels, 1.0, 0.5f, grad, correct);
  CHECK(loss == Approx(-std::log(0.75) + std::log(2.0)));
  CHECK(correct == 1);
  const auto g = grad.to_host();
  CHECK(g[0] == Approx(0.125f));
  CHECK(g[1] == Approx(-0.125f));
  CHECK(g[2] == Approx(0.25f));
  CHECK(g[3] == Approx(-0.25f));

  // Large logits stay finite because the row maximum is subtracted.
  const Tensor big = tensor(Shape{1, 3}, {1000.0f, 0.0f, -1000.0f});
  const Tensor first = tensor(Shape{1}, {0.0f});
  const double tiny = kokkos_backend::softmax_cross_entropy(big, first, 1.0, 1.0f, Tensor(), correct);
  CHECK(std::isfinite(tiny));
  CHECK(tiny == Approx(0.0).margin(1e-6));
  CHECK(correct == 1);
  const Tensor last = tensor(Shape{1}, {2.0f});
  CHECK(kokkos_backend::softmax_cross_entropy(big, last, 1.0, 1.0f, Tensor(), correct) == Approx(2000.0));

  CHECK_THROWS_AS(
      kokkos_backend::softmax_cross_entropy(logits, tensor(Shape{2}, {0.0f, 2.0f}), 1.0, 1.0f, Tensor(), correct),
      tessera::Error);
  CHECK_THROWS_AS(
      kokkos_backend::softmax_cross_entropy(logits, tensor(Shape{2}, {0.5f, 1.0f}), 1.0, 1.0f, Tensor(), correct),
      tessera::Error);
  CHECK_THROWS_AS(
      kokkos_backend::softmax_cross_entropy(logits, tensor(Shape{3}, {0, 0, 0}), 1.0, 1.0f, Tensor(), correct),
      tessera::ShapeError);
}

TEST_CASE("softmax_cross_entropy gradient matches finite differences", "[elementwise][loss]") {
  // Per-voxel: [N=2, D=1, H=2, W=2, C=4] logits.
  const Shape shape{2, 1, 2, 2, 4};
  auto z = random_vector<float>(static_cast<size_t>(shape.numel()), 13u, -2.0, 2.0);
  const Tensor labels = tensor(Shape{2, 1, 2, 2}, {0, 1, 2, 3, 3, 2, 1, 0});
  Tensor logits = tensor(shape, z), grad(shape);
  int64_t correct = 0;
  kokkos_backend::softmax_cross_entropy(logits, labels, 4.0, 0.5f, grad, correct);
  const auto check = check_gradient<float>(
      z, grad.to_host(),
      [&](const std::vector<float>& v) {
        logits.copy_from_host(v);
        int64_t unused = 0;
        return 0.5 * kokkos_backend::softmax_cross_entropy(logits, labels, 4.0, 1.0f, Tensor(), unused);
      },
      1e-2, 1e-3);
  std::printf("[tolerance] softmax_cross_entropy gradient (float): max_rel_error %.3g (limit 5e-3)\n",
              check.max_rel_error);
  INFO(check.str());
  CHECK(check.max_rel_error < 5e-3);
}
