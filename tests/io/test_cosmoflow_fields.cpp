#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/io/cosmoflow_fields.hpp"

using namespace tessera;

namespace {

io::CosmoFlowFields make(int64_t size, uint64_t seed, int64_t channels = 4) {
  io::CosmoFlowFields::Options o;
  o.size = size;
  o.seed = seed;
  o.channels = channels;
  return io::CosmoFlowFields(o);
}

/// |DFT|² of an S³ field, computed on the host in double precision, one axis at a time.
std::vector<double> power(const std::vector<float>& field, int64_t s) {
  std::vector<std::complex<double>> a(field.begin(), field.end()), b(a.size());
  const double pi = 3.14159265358979323846;
  for (int axis = 0; axis < 3; ++axis) {
    const int64_t stride = axis == 0 ? s * s : (axis == 1 ? s : 1);
    for (int64_t i = 0; i < s * s * s; ++i) {
      const int64_t k = (i / stride) % s, base = i - k * stride;
      std::complex<double> sum = 0.0;
      for (int64_t j = 0; j < s; ++j)
        sum += a[static_cast<size_t>(base + j * stride)] * std::polar(1.0, -2.0 * pi * static_cast<double>(j * k) / s);
      b[static_cast<size_t>(i)] = sum;
    }
    std::swap(a, b);
  }
  std::vector<double> p(a.size());
  for (size_t i = 0; i < a.size(); ++i) p[i] = std::norm(a[i]);
  return p;
}

double frequency(int64_t i, int64_t s) { return static_cast<double>(i < s / 2 ? i : i - s) / static_cast<double>(s); }

}  // namespace

TEST_CASE("CosmoFlow parameters are uniform in [-1, 1] and a function of seed and index", "[io][cosmoflow]") {
  auto a = make(8, 1), b = make(8, 1), c = make(8, 2);
  double sum = 0.0;
  for (int64_t i = 0; i < 200; ++i) {
    const auto t = a.parameters(i);
    for (const float x : t) {
      REQUIRE((x >= -1.0f && x <= 1.0f));
      sum += x;
    }
    CHECK(t == b.parameters(i));
    CHECK(t != c.parameters(i));
  }
  CHECK(std::abs(sum / 800.0) < 0.1);
  CHECK_THROWS_AS(make(24, 0), Error);  // not a power of two
}

TEST_CASE("The Gaussian field has the power spectrum its parameters set", "[io][cosmoflow]") {
  const int64_t s = 16;
  auto gen = make(s, 7);
  Tensor g(Shape{s * s * s});
  // Measured over expected power in three frequency shells, pooled over samples (the ratio
  // does not depend on the parameters): 1 up to sampling noise.
  std::array<double, 3> ratio{}, modes{};
  double variance = 0.0;
  for (int64_t index = 0; index < 4; ++index) {
    gen.gaussian_field(index, g.view());
    const auto field = g.to_host();
    double var = 0.0;
    for (const float x : field) var += static_cast<double>(x) * x;
    variance += var / static_cast<double>(field.size()) / 4.0;
    const auto phys = io::CosmoFlowFields::physical(gen.parameters(index));
    std::vector<double> expected(field.size());
    double mean_p = 0.0;
    for (int64_t i = 0; i < s * s * s; ++i) {
      const double fd = frequency(i / (s * s), s), fh = frequency((i / s) % s, s), fw = frequency(i % s, s);
      expected[static_cast<size_t>(i)] =
          io::CosmoFlowFields::spectrum(std::sqrt(fd * fd + fh * fh + fw * fw), phys[1], phys[2]);
      mean_p += expected[static_cast<size_t>(i)] / static_cast<double>(s * s * s);
    }
    const auto measured = power(field, s);
    for (int64_t i = 1; i < s * s * s; ++i) {
      const double fd = frequency(i / (s * s), s), fh = frequency((i / s) % s, s), fw = frequency(i % s, s);
      const double f = std::sqrt(fd * fd + fh * fh + fw * fw);
      const size_t shell = f <= 0.2 ? 0 : (f <= 0.4 ? 1 : 2);
      // Unit white noise has E|ŵ|² = S³; the field is divided by sqrt(mean P).
      ratio[shell] += measured[static_cast<size_t>(i)] / (static_cast<double>(s * s * s) * expected[static_cast<size_t>(i)] / mean_p);
      modes[shell] += 1.0;
    }
  }
  for (size_t k = 0; k < 3; ++k) {
    INFO("shell " << k << ", " << modes[k] << " modes");
    CHECK(ratio[k] / modes[k] == Approx(1.0).margin(0.2));
  }
  CHECK(variance == Approx(1.0).margin(0.35));
}

TEST_CASE("Densities are log-normal, mean 1, growing by exp(growth) per channel", "[io][cosmoflow]") {
  const int64_t s = 16, volume = s * s * s;
  auto gen = make(s, 3);
  Tensor rho(Shape{s, s, s, 4});
  for (int64_t index = 0; index < 3; ++index) {
    gen.densities(index, rho);
    const auto h = rho.to_host();
    const auto phys = io::CosmoFlowFields::physical(gen.parameters(index));
    std::array<double, 4> mean{}, log_sd{};
    for (int64_t c = 0; c < 4; ++c) {
      double m = 0, lm = 0, l2 = 0;
      for (int64_t v = 0; v < volume; ++v) {
        const double x = h[static_cast<size_t>(v * 4 + c)];
        REQUIRE(x > 0.0);
        m += x;
        lm += std::log(x);
        l2 += std::log(x) * std::log(x);
      }
      mean[static_cast<size_t>(c)] = m / volume;
      lm /= volume;
      log_sd[static_cast<size_t>(c)] = std::sqrt(l2 / volume - lm * lm);
    }
    for (int64_t c = 0; c + 1 < 4; ++c)
      CHECK(log_sd[static_cast<size_t>(c + 1)] / log_sd[static_cast<size_t>(c)] == Approx(std::exp(phys[3])).epsilon(1e-3));
    // Today's spread is σ up to the field's sample variance; its mean density about 1.
    CHECK(log_sd[3] == Approx(phys[0]).epsilon(0.35));
    CHECK(mean[3] == Approx(1.0).margin(0.3));
  }
}

TEST_CASE("Stored samples: densities as float32, particle counts as integers", "[io][cosmoflow]") {
  const int64_t s = 8, values = s * s * s * 4;
  auto gen = make(s, 5);
  Tensor rho(Shape{values});
  gen.densities(2, rho);
  const auto h = rho.to_host();
  std::vector<float> f(static_cast<size_t>(values));
  CHECK(gen.stored_values(2, io::ElementType::float32, 0.0, f.data()) == 0);
  CHECK(f == h);
  std::vector<int16_t> counts(static_cast<size_t>(values)), again(counts.size());
  CHECK(gen.stored_values(2, io::ElementType::int16, 64.0, counts.data()) == 0);
  gen.stored_values(5, io::ElementType::int16, 64.0, again.data());
  gen.stored_values(2, io::ElementType::int16, 64.0, again.data());
  CHECK(counts == again);  // a function of (seed, index)
  double total = 0, expected = 0, squared_error = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    REQUIRE(counts[i] >= 0);
    total += counts[i];
    expected += 64.0 * h[i];
    squared_error += (counts[i] - 64.0 * h[i]) * (counts[i] - 64.0 * h[i]) / (64.0 * h[i]);
  }
  CHECK(total / expected == Approx(1.0).margin(0.01));
  CHECK(squared_error / static_cast<double>(counts.size()) == Approx(1.0).margin(0.15));  // Poisson: variance = mean
  std::vector<uint8_t> small(counts.size());
  CHECK(gen.stored_values(2, io::ElementType::uint8, 400.0, small.data()) > 0);  // clipped at 255, and said so
}
