// The Kokkos convolution kernels in double: forward against a direct loop written here, every
// gradient against central finite differences of L = Σ y·r, with one and with many chunks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "support/conv_geometry.hpp"
#include "support/gradient_check.hpp"
#include "tessera/backends/kokkos/conv_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace {

using tessera::DeviceView;
using tessera::kokkos_backend::ConvWorkspace;
using tessera::ops::ConvGeometry;
using tessera::testing::conv3d;
using Vec = std::vector<double>;

Vec to_host(const DeviceView<double>& d) {
  Vec v(d.extent(0));
  Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(v.data(), v.size());
  Kokkos::deep_copy(h, d);
  return v;
}

ConvGeometry geometry_2d(int64_t n, int64_t ci, int64_t co, int64_t h, int64_t w, std::array<int64_t, 2> k,
                         std::array<int64_t, 2> s, std::array<int64_t, 2> p, std::array<int64_t, 2> d) {
  ConvGeometry g = conv3d(n, ci, co, {1, h, w}, {1, k[0], k[1]}, {1, s[0], s[1]}, {0, p[0], p[1]}, {1, d[0], d[1]});
  g.spatial_rank = 2;
  g.validate("test");
  return g;
}

/// Direct definition: y[n,o,co] = b[co] + Σ_{tap,ci} w[co,tap,ci]·x[n, o·s − p + tap·d, ci].
Vec naive_forward(const ConvGeometry& g, const Vec& x, const Vec& w, const Vec& b) {
  const auto o = g.out_size();
  const auto& in = g.in_size;
  Vec y(static_cast<size_t>(g.output_shape().numel()), 0.0);
  size_t e = 0;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t od = 0; od < o[0]; ++od)
      for (int64_t oh = 0; oh < o[1]; ++oh)
        for (int64_t ow = 0; ow < o[2]; ++ow)
          for (int64_t co = 0; co < g.out_channels; ++co, ++e) {
            double acc = b.empty() ? 0.0 : b[static_cast<size_t>(co)];
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const int64_t id = od * g.stride[0] - g.padding[0] + kd * g.dilation[0];
                  const int64_t ih = oh * g.stride[1] - g.padding[1] + kh * g.dilation[1];
                  const int64_t iw = ow * g.stride[2] - g.padding[2] + kw * g.dilation[2];
                  if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                  for (int64_t ci = 0; ci < g.in_channels; ++ci) {
                    const auto xi =
                        static_cast<size_t>((((n * in[0] + id) * in[1] + ih) * in[2] + iw) * g.in_channels + ci);
                    const auto wi = static_cast<size_t>(
                        (((co * g.kernel[0] + kd) * g.kernel[1] + kh) * g.kernel[2] + kw) * g.in_channels + ci);
                    acc += w[wi] * x[xi];
                  }
                }
            y[e] = acc;
          }
  return y;
}

void copy_to(const DeviceView<double>& d, const Vec& v) {
  Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(v.data(), v.size());
  Kokkos::deep_copy(d, h);
}

/// Runs the kernels on host vectors with a given column budget. The device buffers persist, so
/// the thousands of finite-difference evaluations launch no allocation kernels.
struct ConvRunner {
  ConvGeometry g;
  ConvWorkspace<double> workspace;
  DeviceView<double> x, w, b, y;

  ConvRunner(const ConvGeometry& geometry, size_t budget_bytes)
      : g(geometry),
        workspace(budget_bytes),
        x("x", static_cast<size_t>(g.input_shape().numel())),
        w("w", static_cast<size_t>(g.weight_shape().numel())),
        b("b", static_cast<size_t>(g.out_channels)),
        y("y", static_cast<size_t>(g.output_shape().numel())) {}

  Vec forward(const Vec& xv, const Vec& wv, const Vec& bv) {
    copy_to(x, xv);
    copy_to(w, wv);
    if (!bv.empty()) copy_to(b, bv);
    tessera::kokkos_backend::conv_forward<double>(g, x, w, bv.empty() ? DeviceView<const double>() : b, y, workspace);
    return to_host(y);
  }
  Vec backward_data(const Vec& dy, const Vec& wv) {
    copy_to(y, dy);
    copy_to(w, wv);
    Kokkos::deep_copy(x, 1e30);  // must be overwritten, not accumulated into
    tessera::kokkos_backend::conv_backward_data<double>(g, y, w, x, workspace);
    return to_host(x);
  }
  void backward_weights(const Vec& xv, const Vec& dy, Vec& dw, Vec& db) {
    copy_to(x, xv);
    copy_to(y, dy);
    Kokkos::deep_copy(w, 1e30);
    Kokkos::deep_copy(b, 1e30);
    tessera::kokkos_backend::conv_backward_weights<double>(g, x, y, w, b, workspace);
    dw = to_host(w);
    db = to_host(b);
  }
};

double dot(const Vec& a, const Vec& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double max_abs_diff(const Vec& a, const Vec& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

/// Budget for exactly `rows` output positions per chunk.
size_t budget_for_rows(const ConvGeometry& g, int64_t rows) {
  return sizeof(double) * static_cast<size_t>(rows * g.kernel_volume() * g.in_channels);
}

struct Worst {
  double forward = 0.0, dx = 0.0, dw = 0.0, db = 0.0;
};

/// Forward vs the direct loop and dx, dw, dbias vs finite differences with the default
/// workspace (one chunk); then the same with a small workspace (chunks of 5 output positions,
/// the last one partial) against the one-chunk results.
void check_geometry(const ConvGeometry& g, unsigned seed, Worst& worst) {
  INFO("geometry " << g.str());
  using tessera::testing::check_gradient;
  using tessera::testing::random_vector;
  const auto nx = static_cast<size_t>(g.input_shape().numel());
  const auto nw = static_cast<size_t>(g.weight_shape().numel());
  const auto ny = static_cast<size_t>(g.output_shape().numel());
  const auto nb = static_cast<size_t>(g.out_channels);
  const Vec x = random_vector<double>(nx, seed);
  const Vec w = random_vector<double>(nw, seed + 1);
  const Vec b = random_vector<double>(nb, seed + 2);
  const Vec r = random_vector<double>(ny, seed + 3);
  const Vec expected = naive_forward(g, x, w, b);

  ConvRunner run(g, ConvWorkspace<double>::default_budget_bytes);
  const double fwd = max_abs_diff(run.forward(x, w, b), expected);
  CHECK(fwd < 1e-12);
  CHECK(max_abs_diff(run.forward(x, w, {}), naive_forward(g, x, w, {})) < 1e-12);
  const Vec dx = run.backward_data(r, w);
  Vec dw, db;
  run.backward_weights(x, r, dw, db);
  // L is linear in each argument, so central differences are exact up to rounding.
  const auto cx = check_gradient<double>(
      x, dx, [&](const Vec& v) { return dot(run.forward(v, w, b), r); }, 1e-3);
  const auto cw = check_gradient<double>(
      w, dw, [&](const Vec& v) { return dot(run.forward(x, v, b), r); }, 1e-3);
  const auto cb = check_gradient<double>(
      b, db, [&](const Vec& v) { return dot(run.forward(x, w, v), r); }, 1e-3);
  INFO("dx " << cx.str() << "; dw " << cw.str() << "; dbias " << cb.str());
  CHECK(cx.max_rel_error < 1e-6);
  CHECK(cw.max_rel_error < 1e-6);
  CHECK(cb.max_rel_error < 1e-6);
  worst.forward = std::max(worst.forward, fwd);
  worst.dx = std::max(worst.dx, cx.max_rel_error);
  worst.dw = std::max(worst.dw, cw.max_rel_error);
  worst.db = std::max(worst.db, cb.max_rel_error);

  ConvRunner chunked(g, budget_for_rows(g, 5));
  CHECK(chunked.workspace.chunk_rows(g) == std::min<int64_t>(5, static_cast<int64_t>(ny) / g.out_channels));
  CHECK(max_abs_diff(chunked.forward(x, w, b), expected) < 1e-12);
  CHECK(max_abs_diff(chunked.backward_data(r, w), dx) < 1e-12);
  Vec dw_chunked, db_chunked;
  chunked.backward_weights(x, r, dw_chunked, db_chunked);
  CHECK(max_abs_diff(dw_chunked, dw) < 1e-12);
  CHECK(max_abs_diff(db_chunked, db) < 1e-12);
}

void report(const char* name, const Worst& w) {
  std::printf("[tolerance] %s: forward max_abs_err %.1e; max_rel_err dx %.1e, dw %.1e, dbias %.1e (asserted < 1e-6)\n",
              name, w.forward, w.dx, w.dw, w.db);
}

}  // namespace

TEST_CASE("conv kernels 2D: forward and gradients in double", "[conv][kernels]") {
  Worst worst;
  // C = 1 in, 3x3 same padding.
  check_geometry(geometry_2d(2, 1, 3, 7, 6, {3, 3}, {1, 1}, {1, 1}, {1, 1}), 11, worst);
  // Stride 2, padding 2, dilation 2, odd sizes.
  check_geometry(geometry_2d(2, 3, 4, 9, 7, {3, 3}, {2, 2}, {2, 2}, {2, 2}), 12, worst);
  // Anisotropic kernel, stride, padding and dilation; one output channel.
  check_geometry(geometry_2d(2, 3, 1, 7, 8, {3, 2}, {2, 1}, {0, 1}, {1, 2}), 13, worst);
  // 1x1 with stride 2 goes through im2col; 1x1 with stride 1 reads x as the column matrix.
  check_geometry(geometry_2d(2, 4, 3, 5, 7, {1, 1}, {2, 2}, {0, 0}, {1, 1}), 14, worst);
  check_geometry(geometry_2d(2, 4, 3, 5, 7, {1, 1}, {1, 1}, {0, 0}, {1, 1}), 15, worst);
  report("conv kernels 2D", worst);
}

TEST_CASE("conv kernels 3D: forward and gradients in double", "[conv][kernels]") {
  Worst worst;
  // 5x7x6, stride 2, padding 1, C = 3 -> 4.
  check_geometry(conv3d(2, 3, 4, {5, 7, 6}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), 21, worst);
  // Dilation 2 with padding 2 (same size), C = 4 -> 2.
  check_geometry(conv3d(2, 4, 2, {5, 7, 6}, {3, 3, 3}, {1, 1, 1}, {2, 2, 2}, {2, 2, 2}), 22, worst);
  // Kernel 2, stride 2, no padding (the U-Net down-sampling shape); C = 1 -> 1.
  check_geometry(conv3d(2, 1, 1, {5, 7, 6}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}), 23, worst);
  // Pointwise.
  check_geometry(conv3d(2, 4, 3, {5, 7, 6}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}), 24, worst);
  // Mixed per-axis settings.
  check_geometry(conv3d(2, 3, 2, {5, 6, 7}, {2, 3, 1}, {1, 2, 3}, {1, 0, 0}, {2, 1, 1}), 25, worst);
  report("conv kernels 3D", worst);
}

TEST_CASE("conv kernels: one output position per chunk gives the same results", "[conv][kernels]") {
  const ConvGeometry g = conv3d(2, 3, 2, {5, 4, 3}, {3, 3, 3}, {2, 1, 2}, {1, 1, 1}, {1, 1, 1});
  using tessera::testing::random_vector;
  const Vec x = random_vector<double>(static_cast<size_t>(g.input_shape().numel()), 31);
  const Vec w = random_vector<double>(static_cast<size_t>(g.weight_shape().numel()), 32);
  const Vec r = random_vector<double>(static_cast<size_t>(g.output_shape().numel()), 33);
  ConvRunner whole(g, ConvWorkspace<double>::default_budget_bytes), single(g, 1);
  CHECK(single.workspace.chunk_rows(g) == 1);
  CHECK(whole.workspace.chunk_rows(g) == g.output_shape().numel() / g.out_channels);
  CHECK(max_abs_diff(single.forward(x, w, {}), whole.forward(x, w, {})) < 1e-13);
  CHECK(max_abs_diff(single.backward_data(r, w), whole.backward_data(r, w)) < 1e-13);
  Vec dw1, db1, dw2, db2;
  single.backward_weights(x, r, dw1, db1);
  whole.backward_weights(x, r, dw2, db2);
  CHECK(max_abs_diff(dw1, dw2) < 1e-12);
  CHECK(max_abs_diff(db1, db2) == 0.0);
}

TEST_CASE("conv kernels: repeated backward passes are bitwise identical", "[conv][kernels]") {
  const ConvGeometry g = conv3d(2, 3, 4, {5, 7, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  using tessera::testing::random_vector;
  const Vec x = random_vector<double>(static_cast<size_t>(g.input_shape().numel()), 41);
  const Vec w = random_vector<double>(static_cast<size_t>(g.weight_shape().numel()), 42);
  const Vec r = random_vector<double>(static_cast<size_t>(g.output_shape().numel()), 43);
  ConvRunner run(g, budget_for_rows(g, 37));
  const Vec dx = run.backward_data(r, w);
  Vec dw, db, dw2, db2;
  run.backward_weights(x, r, dw, db);
  for (int i = 0; i < 3; ++i) {
    CHECK(run.backward_data(r, w) == dx);
    run.backward_weights(x, r, dw2, db2);
    CHECK(dw2 == dw);
    CHECK(db2 == db);
  }
}

TEST_CASE("kokkos ConvOp runs the kernels in float on tensors", "[conv][kernels]") {
  const ConvGeometry g = conv3d(2, 3, 4, {5, 7, 6}, {3, 3, 3}, {2, 1, 2}, {1, 1, 1}, {1, 1, 1});
  using tessera::testing::random_vector;
  const Vec x = random_vector<double>(static_cast<size_t>(g.input_shape().numel()), 51);
  const Vec w = random_vector<double>(static_cast<size_t>(g.weight_shape().numel()), 52);
  const Vec b = random_vector<double>(static_cast<size_t>(g.out_channels), 53);
  const auto as_float = [](const Vec& v) { return std::vector<float>(v.begin(), v.end()); };
  tessera::Tensor xt(g.input_shape()), wt(g.weight_shape()), bt(tessera::Shape{g.out_channels}), yt(g.output_shape());
  xt.copy_from_host(as_float(x));
  wt.copy_from_host(as_float(w));
  bt.copy_from_host(as_float(b));
  auto op = tessera::kokkos_backend::make_conv(g);
  CHECK(op->backend() == "kokkos");
  op->forward(xt, wt, bt, yt);
  const Vec expected = naive_forward(g, x, w, b);
  const std::vector<float> y = yt.to_host();
  double worst = 0.0;
  for (size_t i = 0; i < y.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(y[i]) - expected[i]) / std::max(1.0, std::abs(expected[i])));
  CHECK(worst < 1e-5);
  std::printf("[tolerance] kokkos ConvOp float forward: max_rel_err %.1e (asserted < 1e-5)\n", worst);

  // Wrong tensor sizes are reported with both shapes.
  tessera::Tensor wrong(tessera::Shape{2, 5, 7, 5, 3});
  CHECK_THROWS_AS(op->forward(wrong, wt, bt, yt), tessera::ShapeError);
  CHECK_THROWS_WITH(op->forward(wrong, wt, bt, yt), Catch::Contains("[2, 5, 7, 5, 3]"));
}

TEST_CASE("conv geometry: output size, shapes and validation", "[conv][geometry]") {
  ConvGeometry g = conv3d(2, 3, 8, {5, 7, 6}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1});
  CHECK(g.out_size() == std::array<int64_t, 3>{3, 4, 3});
  CHECK(g.input_shape() == tessera::Shape{2, 5, 7, 6, 3});
  CHECK(g.output_shape() == tessera::Shape{2, 3, 4, 3, 8});
  CHECK(g.weight_shape() == tessera::Shape{8, 3, 3, 3, 3});
  CHECK(g.forward_flops() == 2.0 * 27 * 3 * 8 * (2 * 3 * 4 * 3));
  CHECK(g.str() == "3d 3->8 k3x3x3 s2 p1 d1 in 2x5x7x6");

  const ConvGeometry g2 = geometry_2d(1, 4, 2, 9, 9, {3, 3}, {1, 1}, {2, 2}, {2, 2});
  CHECK(g2.out_size() == std::array<int64_t, 3>{1, 9, 9});
  CHECK(g2.output_shape() == tessera::Shape{1, 9, 9, 2});
  CHECK(g2.weight_shape() == tessera::Shape{2, 3, 3, 4});

  ConvGeometry too_big = g;
  too_big.kernel = {7, 3, 3};
  too_big.padding = {0, 0, 0};
  CHECK_THROWS_AS(too_big.validate("layer 'c'"), tessera::ShapeError);
  CHECK_THROWS_WITH(too_big.validate("layer 'c'"), Catch::StartsWith("layer 'c'") && Catch::Contains("depth"));
  ConvGeometry zero_channels = g;
  zero_channels.in_channels = 0;
  CHECK_THROWS_AS(zero_channels.validate("x"), tessera::ShapeError);
  ConvGeometry zero_stride = g;
  zero_stride.stride[1] = 0;
  CHECK_THROWS_AS(zero_stride.validate("x"), tessera::ShapeError);
  ConvGeometry negative_padding = g;
  negative_padding.padding[2] = -1;
  CHECK_THROWS_AS(negative_padding.validate("x"), tessera::ShapeError);
  ConvGeometry deep_2d = g2;
  deep_2d.kernel[0] = 3;
  CHECK_THROWS_AS(deep_2d.validate("x"), tessera::ShapeError);
}
