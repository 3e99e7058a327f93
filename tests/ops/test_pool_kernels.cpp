// The Kokkos pooling kernels in double: forward against a direct loop written here, and the
// input gradient against central finite differences of L = Σ y·r.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <vector>

#include "support/conv_geometry.hpp"
#include "support/gradient_check.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/backends/kokkos/pool_kernels.hpp"
#include "tessera/core/error.hpp"

namespace {

using tessera::DeviceView;
using tessera::ops::PoolGeometry;
using tessera::ops::PoolKind;
using Vec = std::vector<double>;

void copy_to(const DeviceView<double>& d, const Vec& v) {
  Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(v.data(), v.size());
  Kokkos::deep_copy(d, h);
}

Vec to_host(const DeviceView<double>& d) {
  Vec v(d.extent(0));
  Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(v.data(), v.size());
  Kokkos::deep_copy(h, d);
  return v;
}

PoolGeometry geometry(PoolKind kind, int rank, int64_t n, int64_t c, std::array<int64_t, 3> in,
                      std::array<int64_t, 3> k, std::array<int64_t, 3> s, std::array<int64_t, 3> p) {
  return tessera::testing::pool_geometry(kind, rank, n, c, in, k, s, p);
}

/// Direct definition: max, or mean over the in-bounds elements, of each window.
Vec naive_forward(const PoolGeometry& g, const Vec& x) {
  const auto o = g.out_size();
  const auto& in = g.in_size;
  Vec y;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t od = 0; od < o[0]; ++od)
      for (int64_t oh = 0; oh < o[1]; ++oh)
        for (int64_t ow = 0; ow < o[2]; ++ow)
          for (int64_t c = 0; c < g.channels; ++c) {
            double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
            int count = 0;
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const int64_t id = od * g.stride[0] - g.padding[0] + kd;
                  const int64_t ih = oh * g.stride[1] - g.padding[1] + kh;
                  const int64_t iw = ow * g.stride[2] - g.padding[2] + kw;
                  if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                  const double v =
                      x[static_cast<size_t>((((n * in[0] + id) * in[1] + ih) * in[2] + iw) * g.channels + c)];
                  best = std::max(best, v);
                  sum += v;
                  ++count;
                }
            y.push_back(g.kind == PoolKind::max ? best : sum / count);
          }
  return y;
}

/// Distinct values spaced 1/n apart in random order, so no window has a tie and finite
/// differences with a step well below the spacing never change a window's maximum.
Vec tie_free(size_t n, unsigned seed) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const Vec keys = tessera::testing::random_vector<double>(n, seed);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[order[i]] = -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n);
  return v;
}

/// Runs the kernels on host vectors through device buffers that persist across calls.
struct PoolRunner {
  PoolGeometry g;
  tessera::kokkos_backend::PoolArgmax argmax;
  DeviceView<double> x, y;

  explicit PoolRunner(const PoolGeometry& geometry)
      : g(geometry),
        argmax("argmax", static_cast<size_t>(geometry.output_shape().numel())),
        x("x", static_cast<size_t>(geometry.input_shape().numel())),
        y("y", static_cast<size_t>(geometry.output_shape().numel())) {}

  Vec forward(const Vec& xv) {
    copy_to(x, xv);
    if (g.kind == PoolKind::max)
      tessera::kokkos_backend::max_pool_forward<double>(g, x, y, argmax);
    else
      tessera::kokkos_backend::avg_pool_forward<double>(g, x, y);
    return to_host(y);
  }
  Vec backward(const Vec& dy) {
    copy_to(y, dy);
    Kokkos::deep_copy(x, 1e30);  // must be overwritten
    if (g.kind == PoolKind::max)
      tessera::kokkos_backend::max_pool_backward<double>(g, y, argmax, x);
    else
      tessera::kokkos_backend::avg_pool_backward<double>(g, y, x);
    return to_host(x);
  }
};

double dot(const Vec& a, const Vec& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

struct Worst {
  double forward = 0.0, dx = 0.0;
};

void check_geometry(const PoolGeometry& g, unsigned seed, Worst& worst) {
  INFO("geometry " << g.str());
  const auto nx = static_cast<size_t>(g.input_shape().numel());
  const Vec x = tie_free(nx, seed);
  const Vec r = tessera::testing::random_vector<double>(static_cast<size_t>(g.output_shape().numel()), seed + 1);
  PoolRunner run(g);
  const Vec y = run.forward(x);
  const Vec expected = naive_forward(g, x);
  REQUIRE(y.size() == expected.size());
  double fwd = 0.0;
  for (size_t i = 0; i < y.size(); ++i) fwd = std::max(fwd, std::abs(y[i] - expected[i]));
  CHECK(fwd < 1e-14);

  const Vec dx = run.backward(r);
  PoolRunner probe(g);
  const double h = 0.1 / static_cast<double>(nx);  // a tenth of the spacing of the values
  const auto c = tessera::testing::check_gradient<double>(
      x, dx, [&](const Vec& v) { return dot(probe.forward(v), r); }, h);
  INFO("dx " << c.str());
  CHECK(c.max_rel_error < 1e-6);
  worst.forward = std::max(worst.forward, fwd);
  worst.dx = std::max(worst.dx, c.max_rel_error);
}

void report(const char* name, const Worst& w) {
  std::printf("[tolerance] %s: forward max_abs_err %.1e; dx max_rel_err %.1e (asserted < 1e-6)\n", name, w.forward,
              w.dx);
}

}  // namespace

TEST_CASE("pool kernels: max and average in 2D, in double", "[pool][kernels]") {
  for (const PoolKind kind : {PoolKind::max, PoolKind::average}) {
    Worst worst;
    // Non-overlapping windows with a ragged edge (7 = 3·2 + 1), C = 1.
    check_geometry(geometry(kind, 2, 2, 1, {1, 7, 6}, {1, 2, 2}, {1, 2, 2}, {0, 0, 0}), 1, worst);
    // Overlapping 3x3 windows, stride 2, padding 1, C = 3.
    check_geometry(geometry(kind, 2, 2, 3, {1, 7, 6}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}), 2, worst);
    // Stride 1 (every input in up to 9 windows), anisotropic kernel and padding.
    check_geometry(geometry(kind, 2, 2, 4, {1, 5, 7}, {1, 3, 2}, {1, 1, 1}, {0, 1, 0}), 3, worst);
    // Stride larger than the kernel leaves inputs in no window (their gradient is 0).
    check_geometry(geometry(kind, 2, 2, 2, {1, 7, 8}, {1, 2, 2}, {1, 3, 3}, {0, 0, 1}), 4, worst);
    // Windows that tile the input, 32 channels: two whole blocks of the tiled max pool.
    check_geometry(geometry(kind, 2, 2, 32, {1, 6, 4}, {1, 2, 2}, {1, 2, 2}, {0, 0, 0}), 5, worst);
    report(kind == PoolKind::max ? "max pool kernels 2D" : "avg pool kernels 2D", worst);
  }
}

TEST_CASE("pool kernels: max and average in 3D, in double", "[pool][kernels]") {
  for (const PoolKind kind : {PoolKind::max, PoolKind::average}) {
    Worst worst;
    check_geometry(geometry(kind, 3, 2, 1, {5, 7, 6}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}), 11, worst);
    check_geometry(geometry(kind, 3, 2, 3, {5, 7, 6}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}), 12, worst);
    check_geometry(geometry(kind, 3, 2, 2, {5, 7, 6}, {3, 2, 3}, {1, 2, 1}, {1, 0, 2}), 13, worst);
    // Tiling windows, 19 channels: a whole block of the tiled max pool and 3 past it.
    check_geometry(geometry(kind, 3, 2, 19, {4, 6, 8}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}), 14, worst);
    report(kind == PoolKind::max ? "max pool kernels 3D" : "avg pool kernels 3D", worst);
  }
}

TEST_CASE("pool kernels: ties go to the first element of the window", "[pool][kernels]") {
  const PoolGeometry g = geometry(PoolKind::max, 2, 1, 1, {1, 2, 2}, {1, 2, 2}, {1, 2, 2}, {0, 0, 0});
  PoolRunner run(g);
  CHECK(run.forward({1.0, 1.0, 1.0, 1.0}) == Vec{1.0});
  CHECK(run.backward({2.0}) == Vec{2.0, 0.0, 0.0, 0.0});
}

TEST_CASE("kokkos PoolOp runs the kernels in float on tensors", "[pool][kernels]") {
  for (const PoolKind kind : {PoolKind::max, PoolKind::average}) {
    const PoolGeometry g = geometry(kind, 3, 2, 3, {5, 7, 6}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1});
    const Vec x = tie_free(static_cast<size_t>(g.input_shape().numel()), 7);
    const Vec dy = tessera::testing::random_vector<double>(static_cast<size_t>(g.output_shape().numel()), 8);
    tessera::Tensor xt(g.input_shape()), yt(g.output_shape()), dyt(g.output_shape()), dxt(g.input_shape());
    xt.copy_from_host(std::vector<float>(x.begin(), x.end()));
    dyt.copy_from_host(std::vector<float>(dy.begin(), dy.end()));
    auto op = tessera::kokkos_backend::make_pool(g);
    if (kind == PoolKind::max) CHECK_THROWS_AS(op->backward(xt, dyt, dxt), tessera::Error);
    op->forward(xt, yt);
    op->backward(xt, dyt, dxt);
    PoolRunner run(g);
    const Vec y_ref = run.forward(x);
    const Vec dx_ref = run.backward(dy);
    const std::vector<float> y = yt.to_host(), dx = dxt.to_host();
    double worst = 0.0;
    for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(y[i] - y_ref[i]));
    for (size_t i = 0; i < dx.size(); ++i) worst = std::max(worst, std::abs(dx[i] - dx_ref[i]));
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("pool geometry: output size, shapes and validation", "[pool][geometry]") {
  const PoolGeometry g = geometry(PoolKind::max, 3, 2, 3, {5, 7, 6}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0});
  CHECK(g.out_size() == std::array<int64_t, 3>{2, 3, 3});
  CHECK(g.input_shape() == tessera::Shape{2, 5, 7, 6, 3});
  CHECK(g.output_shape() == tessera::Shape{2, 2, 3, 3, 3});
  CHECK(g.str() == "3d max 3ch k2x2x2 s2 p0 in 2x5x7x6");
  const PoolGeometry g2 = geometry(PoolKind::average, 2, 1, 1, {1, 7, 7}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1});
  CHECK(g2.output_shape() == tessera::Shape{1, 4, 4, 1});

  PoolGeometry too_big = g;
  too_big.kernel = {6, 2, 2};
  CHECK_THROWS_AS(too_big.validate("layer 'p'"), tessera::ShapeError);
  CHECK_THROWS_WITH(too_big.validate("layer 'p'"), Catch::StartsWith("layer 'p'") && Catch::Contains("depth"));
  PoolGeometry padding_as_big_as_kernel = g;
  padding_as_big_as_kernel.padding = {0, 2, 0};
  CHECK_THROWS_AS(padding_as_big_as_kernel.validate("x"), tessera::ShapeError);
  PoolGeometry no_channels = g;
  no_channels.channels = 0;
  CHECK_THROWS_AS(no_channels.validate("x"), tessera::ShapeError);
}
