// The oneDNN backend's ops against the Kokkos reference ops on fresh random inputs: forward and
// every gradient, over channel counts, odd sizes, strides, dilations, kernels and paddings in
// 2D and 3D, plus repeatability and rebuilding for another OpenMP thread count.
#include "tessera/build_info.hpp"

#if TESSERA_ENABLE_ONEDNN

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "tessera/core/tensor.hpp"
#include "tessera/ops/backend.hpp"

namespace {

using namespace tessera;
using ops::ConvGeometry;
using ops::PoolGeometry;
using ops::PoolKind;

// oneDNN sums in other orders (and blocks channels) than im2col + gemm; both are float.
constexpr double tolerance = 1e-4;

/// The worst relative error seen per quantity, reported once per test case.
class ErrorLog {
 public:
  void record(const std::string& what, double error) { worst_[what] = std::max(worst_[what], error); }
  std::string str() const {
    std::ostringstream s;
    s << "onednn vs kokkos, worst relative error (tolerance " << tolerance << "):";
    for (const auto& [what, e] : worst_) s << " " << what << "=" << e;
    return s.str();
  }

 private:
  std::map<std::string, double> worst_;
};

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (auto& e : v) e = u(rng);
  Tensor t(shape);
  t.copy_from_host(v);
  return t;
}

/// A tensor full of a value no op produces, so that an element an op fails to write shows.
Tensor poisoned(const Shape& shape) {
  Tensor t(shape);
  t.fill(1234.5f);
  return t;
}

/// max |a − b| / max |b|: the error relative to the size of the reference result.
double relative_error(const Tensor& a, const Tensor& reference) {
  const auto x = a.to_host(), y = reference.to_host();
  REQUIRE(x.size() == y.size());
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(x[i]) - y[i]));
    scale = std::max(scale, std::abs(static_cast<double>(y[i])));
  }
  if (std::isnan(diff)) return INFINITY;
  return diff / std::max(scale, 1e-30);
}

void expect_close(ErrorLog& log, const std::string& what, const std::string& where, const Tensor& a,
                  const Tensor& reference) {
  const double e = relative_error(a, reference);
  log.record(what, e);
  INFO(where << ": " << what << " relative error " << e);
  CHECK(e <= tolerance);
}

ConvGeometry conv3d(int64_t n, int64_t ci, int64_t co, std::array<int64_t, 3> in, std::array<int64_t, 3> k,
                    std::array<int64_t, 3> s, std::array<int64_t, 3> p, std::array<int64_t, 3> d) {
  ConvGeometry g;
  g.batch = n;
  g.in_channels = ci;
  g.out_channels = co;
  g.in_size = in;
  g.kernel = k;
  g.stride = s;
  g.padding = p;
  g.dilation = d;
  g.validate("test");
  return g;
}

ConvGeometry conv2d(int64_t n, int64_t ci, int64_t co, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p,
                    int64_t d) {
  ConvGeometry g = conv3d(n, ci, co, {1, h, w}, {1, k, k}, {1, s, s}, {0, p, p}, {1, d, d});
  g.spatial_rank = 2;
  g.validate("test");
  return g;
}

/// Every pass of `g` on both backends, with and without bias, from the same random inputs.
void compare_conv(const ConvGeometry& g, ErrorLog& log, uint32_t seed) {
  const std::string where = g.str();
  INFO(where);
  auto mine = ops::backend("onednn").make_conv(g);
  auto ref = ops::backend("kokkos").make_conv(g);
  REQUIRE(mine != nullptr);
  REQUIRE(mine->backend() == "onednn");
  const Tensor x = random_tensor(g.input_shape(), seed), w = random_tensor(g.weight_shape(), seed + 1);
  const Tensor b = random_tensor(Shape{g.out_channels}, seed + 2), dy = random_tensor(g.output_shape(), seed + 3);

  for (const bool with_bias : {true, false}) {
    const Tensor bias = with_bias ? b : Tensor();
    const Tensor y = poisoned(g.output_shape()), y_ref = poisoned(g.output_shape());
    mine->forward(x, w, bias, y);
    ref->forward(x, w, bias, y_ref);
    expect_close(log, with_bias ? "conv_fwd_bias" : "conv_fwd", where, y, y_ref);

    const Tensor dw = poisoned(g.weight_shape()), dw_ref = poisoned(g.weight_shape());
    const Tensor db = with_bias ? poisoned(Shape{g.out_channels}) : Tensor();
    const Tensor db_ref = with_bias ? poisoned(Shape{g.out_channels}) : Tensor();
    mine->backward_weights(x, dy, dw, db);
    ref->backward_weights(x, dy, dw_ref, db_ref);
    expect_close(log, "conv_bwd_w", where, dw, dw_ref);
    if (with_bias) expect_close(log, "conv_bwd_bias", where, db, db_ref);
  }
  const Tensor dx = poisoned(g.input_shape()), dx_ref = poisoned(g.input_shape());
  mine->backward_data(dy, w, dx);
  ref->backward_data(dy, w, dx_ref);
  expect_close(log, "conv_bwd_d", where, dx, dx_ref);
}

void compare_pool(const PoolGeometry& g, ErrorLog& log, uint32_t seed) {
  const std::string where = g.str();
  INFO(where);
  auto mine = ops::backend("onednn").make_pool(g);
  auto ref = ops::backend("kokkos").make_pool(g);
  REQUIRE(mine != nullptr);
  REQUIRE(mine->backend() == "onednn");
  const Tensor x = random_tensor(g.input_shape(), seed), dy = random_tensor(g.output_shape(), seed + 1);
  const Tensor y = poisoned(g.output_shape()), y_ref = poisoned(g.output_shape());
  mine->forward(x, y);
  ref->forward(x, y_ref);
  const std::string kind = g.kind == PoolKind::max ? "max" : "avg";
  expect_close(log, kind + "_pool_fwd", where, y, y_ref);
  const Tensor dx = poisoned(g.input_shape()), dx_ref = poisoned(g.input_shape());
  mine->backward(x, dy, dx);
  ref->backward(x, dy, dx_ref);
  expect_close(log, kind + "_pool_bwd", where, dx, dx_ref);
}

PoolGeometry pool(PoolKind kind, int rank, int64_t c, std::array<int64_t, 3> in, int64_t k, int64_t s, int64_t p) {
  PoolGeometry g;
  g.kind = kind;
  g.spatial_rank = rank;
  g.batch = 2;
  g.channels = c;
  g.in_size = in;
  g.kernel = {rank == 2 ? 1 : k, k, k};
  g.stride = {rank == 2 ? 1 : s, s, s};
  g.padding = {rank == 2 ? 0 : p, p, p};
  g.validate("test");
  return g;
}

}  // namespace

TEST_CASE("onednn conv matches kokkos in 3D: channels, odd sizes, stride, dilation, kernel, padding",
          "[onednn][conv]") {
  ErrorLog log;
  const std::array<int64_t, 3> odd{5, 7, 6};
  uint32_t seed = 100;
  compare_conv(conv3d(2, 1, 4, odd, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, seed += 10);
  compare_conv(conv3d(2, 4, 8, odd, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), log, seed += 10);
  compare_conv(conv3d(2, 4, 4, odd, {3, 3, 3}, {1, 1, 1}, {2, 2, 2}, {2, 2, 2}), log, seed += 10);
  compare_conv(conv3d(2, 4, 16, odd, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}), log, seed += 10);
  compare_conv(conv3d(2, 8, 4, odd, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}), log, seed += 10);
  compare_conv(conv3d(2, 4, 4, odd, {1, 1, 1}, {1, 1, 1}, {2, 2, 2}, {1, 1, 1}), log, seed += 10);
  compare_conv(conv3d(2, 3, 5, odd, {3, 1, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}), log, seed += 10);
  // Channel counts the blocked kernels handle in full vector blocks.
  compare_conv(conv3d(2, 16, 32, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, seed += 10);
  WARN(log.str());
}

TEST_CASE("onednn conv matches kokkos in 2D", "[onednn][conv]") {
  ErrorLog log;
  uint32_t seed = 200;
  compare_conv(conv2d(2, 1, 4, 9, 11, 3, 1, 1, 1), log, seed += 10);
  compare_conv(conv2d(2, 4, 8, 9, 11, 3, 2, 1, 1), log, seed += 10);
  compare_conv(conv2d(2, 4, 4, 9, 11, 3, 1, 2, 2), log, seed += 10);
  compare_conv(conv2d(2, 4, 8, 9, 11, 1, 1, 0, 1), log, seed += 10);
  compare_conv(conv2d(2, 8, 4, 9, 11, 2, 2, 0, 1), log, seed += 10);
  compare_conv(conv2d(2, 16, 32, 12, 10, 3, 1, 1, 1), log, seed += 10);
  WARN(log.str());
}

TEST_CASE("onednn conv serves transposed convolution: backward_data with stride 2 upsamples as kokkos does",
          "[onednn][conv]") {
  // A ConvTranspose layer runs the adjoint convolution: its forward is backward_data of a
  // strided conv from the upsampled size, its input gradient that conv's forward.
  ErrorLog log;
  compare_conv(conv3d(2, 4, 8, {8, 8, 8}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}), log, 300);
  compare_conv(conv3d(2, 4, 8, {9, 9, 9}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), log, 310);
  compare_conv(conv3d(2, 4, 8, {10, 10, 10}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), log, 320);
  compare_conv(conv2d(2, 8, 1, 10, 12, 2, 2, 0, 1), log, 330);
  WARN(log.str());
}

TEST_CASE("onednn conv gives identical results on repeated calls", "[onednn][conv]") {
  const ConvGeometry g = conv3d(2, 4, 16, {5, 7, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto op = ops::backend("onednn").make_conv(g);
  REQUIRE(op != nullptr);
  const Tensor x = random_tensor(g.input_shape(), 1), w = random_tensor(g.weight_shape(), 2);
  const Tensor b = random_tensor(Shape{g.out_channels}, 3), dy = random_tensor(g.output_shape(), 4);
  const Tensor y1(g.output_shape()), y2(g.output_shape()), dx1(g.input_shape()), dx2(g.input_shape());
  const Tensor dw1(g.weight_shape()), dw2(g.weight_shape()), db1(Shape{g.out_channels}), db2(Shape{g.out_channels});
  op->forward(x, w, b, y1);
  op->backward_data(dy, w, dx1);
  op->backward_weights(x, dy, dw1, db1);
  for (int repeat = 0; repeat < 3; ++repeat) {
    op->forward(x, w, b, y2);
    op->backward_data(dy, w, dx2);
    op->backward_weights(x, dy, dw2, db2);
    CHECK(y2.to_host() == y1.to_host());
    CHECK(dx2.to_host() == dx1.to_host());
    CHECK(dw2.to_host() == dw1.to_host());
    CHECK(db2.to_host() == db1.to_host());
  }
}

#ifdef _OPENMP
TEST_CASE("onednn ops rebuild their primitives when the OpenMP thread count changes", "[onednn][conv][pool]") {
  const ConvGeometry g = conv3d(2, 8, 16, {6, 7, 5}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  const PoolGeometry pg = pool(PoolKind::max, 3, 16, {6, 7, 5}, 2, 2, 0);
  auto conv = ops::backend("onednn").make_conv(g);
  auto ref = ops::backend("kokkos").make_conv(g);
  auto pool_op = ops::backend("onednn").make_pool(pg);
  auto pool_ref = ops::backend("kokkos").make_pool(pg);
  REQUIRE(conv != nullptr);
  REQUIRE(pool_op != nullptr);
  const Tensor x = random_tensor(g.input_shape(), 11), w = random_tensor(g.weight_shape(), 12);
  const Tensor dy = random_tensor(g.output_shape(), 13), pdy = random_tensor(pg.output_shape(), 14);
  const Tensor y_ref(g.output_shape()), dx_ref(g.input_shape()), dw_ref(g.weight_shape());
  ref->forward(x, w, Tensor(), y_ref);
  ref->backward_data(dy, w, dx_ref);
  ref->backward_weights(x, dy, dw_ref, Tensor());
  const Tensor py_ref(pg.output_shape()), pdx_ref(pg.input_shape());
  pool_ref->forward(y_ref, py_ref);
  pool_ref->backward(y_ref, pdy, pdx_ref);

  const int original = omp_get_max_threads();
  ErrorLog log;
  // Fewer threads, more threads than cores, and back: each run must match the reference, and
  // the first and last (same count) must match each other exactly.
  std::vector<std::vector<float>> first;
  for (const int threads : {original, 1, original + 2, original}) {
    omp_set_num_threads(threads);
    INFO("OpenMP threads " << threads);
    const Tensor y = poisoned(g.output_shape()), dx = poisoned(g.input_shape()), dw = poisoned(g.weight_shape());
    conv->forward(x, w, Tensor(), y);
    conv->backward_data(dy, w, dx);
    conv->backward_weights(x, dy, dw, Tensor());
    const Tensor py = poisoned(pg.output_shape()), pdx = poisoned(pg.input_shape());
    pool_op->forward(y, py);
    pool_op->backward(y, pdy, pdx);
    const std::string where = "threads " + std::to_string(threads);
    expect_close(log, "conv_fwd", where, y, y_ref);
    expect_close(log, "conv_bwd_d", where, dx, dx_ref);
    expect_close(log, "conv_bwd_w", where, dw, dw_ref);
    expect_close(log, "max_pool_fwd", where, py, py_ref);
    expect_close(log, "max_pool_bwd", where, pdx, pdx_ref);
    std::vector<std::vector<float>> results{y.to_host(), dx.to_host(), dw.to_host(), py.to_host(), pdx.to_host()};
    if (first.empty())
      first = results;
    else if (threads == original)
      CHECK(results == first);
  }
  omp_set_num_threads(original);
  WARN(log.str());
}
#endif

TEST_CASE("onednn pooling matches kokkos: max and average, stride 2, padding, 2D and 3D", "[onednn][pool]") {
  ErrorLog log;
  uint32_t seed = 400;
  for (const PoolKind kind : {PoolKind::max, PoolKind::average}) {
    compare_pool(pool(kind, 3, 1, {5, 7, 6}, 2, 2, 0), log, seed += 10);
    compare_pool(pool(kind, 3, 4, {5, 7, 6}, 3, 2, 1), log, seed += 10);
    compare_pool(pool(kind, 3, 4, {5, 7, 6}, 3, 1, 1), log, seed += 10);
    compare_pool(pool(kind, 3, 16, {8, 8, 8}, 2, 2, 0), log, seed += 10);
    compare_pool(pool(kind, 3, 3, {6, 5, 7}, 3, 3, 2), log, seed += 10);
    compare_pool(pool(kind, 2, 1, {1, 9, 11}, 2, 2, 0), log, seed += 10);
    compare_pool(pool(kind, 2, 4, {1, 9, 11}, 3, 2, 1), log, seed += 10);
  }
  WARN(log.str());
}

TEST_CASE("onednn pooling backward before forward is an error for max pooling", "[onednn][pool]") {
  const PoolGeometry g = pool(PoolKind::max, 3, 4, {4, 4, 4}, 2, 2, 0);
  auto op = ops::backend("onednn").make_pool(g);
  REQUIRE(op != nullptr);
  const Tensor x(g.input_shape()), dy(g.output_shape()), dx(g.input_shape());
  CHECK_THROWS_WITH(op->backward(x, dy, dx), Catch::Contains("backward called before forward"));
}

TEST_CASE("onednn activations match kokkos forward and backward", "[onednn][eltwise]") {
  ErrorLog log;
  const std::vector<ops::EltwiseDesc> descs{{ops::EltwiseKind::relu, 0.0f},
                                            {ops::EltwiseKind::leaky_relu, 0.1f},
                                            {ops::EltwiseKind::elu, 1.0f},
                                            {ops::EltwiseKind::elu, 0.5f}};
  uint32_t seed = 500;
  for (const auto& d : descs) {
    INFO(d.str());
    auto mine = ops::backend("onednn").make_eltwise(d);
    auto ref = ops::backend("kokkos").make_eltwise(d);
    REQUIRE(mine != nullptr);
    REQUIRE(mine->backend() == "onednn");
    // Several sizes through the same op, one of them twice, as a layer sees a smaller last batch.
    for (const Shape& s : {Shape{2, 5, 7, 6, 3}, Shape{1}, Shape{3, 17}, Shape{2, 5, 7, 6, 3}, Shape{100003}}) {
      const Tensor x = random_tensor(s, seed += 10), dy = random_tensor(s, seed + 1);
      const Tensor y = poisoned(s), y_ref = poisoned(s), dx = poisoned(s), dx_ref = poisoned(s);
      mine->forward(x, y);
      ref->forward(x, y_ref);
      mine->backward(x, dy, dx);
      ref->backward(x, dy, dx_ref);
      expect_close(log, "eltwise_fwd", d.str() + " " + s.str(), y, y_ref);
      expect_close(log, "eltwise_bwd", d.str() + " " + s.str(), dx, dx_ref);
    }
  }
  WARN(log.str());
}

TEST_CASE("onednn inner product matches kokkos", "[onednn][inner_product]") {
  ErrorLog log;
  uint32_t seed = 600;
  for (const auto& g : {ops::InnerProductGeometry{2, 7, 5}, ops::InnerProductGeometry{1, 3, 1},
                        ops::InnerProductGeometry{4, 2048, 128}, ops::InnerProductGeometry{4, 128, 4}}) {
    const std::string where =
        std::to_string(g.batch) + "x" + std::to_string(g.in_features) + "->" + std::to_string(g.out_features);
    INFO(where);
    auto mine = ops::backend("onednn").make_inner_product(g);
    REQUIRE(mine != nullptr);
    REQUIRE(mine->backend() == "onednn");
    auto ref = ops::backend("kokkos").make_inner_product(g);
    const Tensor x = random_tensor(Shape{g.batch, g.in_features}, seed += 10);
    const Tensor w = random_tensor(Shape{g.out_features, g.in_features}, seed + 1);
    const Tensor b = random_tensor(Shape{g.out_features}, seed + 2);
    const Tensor dy = random_tensor(Shape{g.batch, g.out_features}, seed + 3);
    for (const bool with_bias : {true, false}) {
      const Tensor bias = with_bias ? b : Tensor();
      const Tensor y = poisoned(dy.shape()), y_ref = poisoned(dy.shape());
      mine->forward(x, w, bias, y);
      ref->forward(x, w, bias, y_ref);
      expect_close(log, "ip_fwd", where, y, y_ref);
      const Tensor dw = poisoned(w.shape()), dw_ref = poisoned(w.shape());
      const Tensor db = with_bias ? poisoned(b.shape()) : Tensor(), db_ref = with_bias ? poisoned(b.shape()) : Tensor();
      mine->backward_weights(x, dy, dw, db);
      ref->backward_weights(x, dy, dw_ref, db_ref);
      expect_close(log, "ip_bwd_w", where, dw, dw_ref);
      if (with_bias) expect_close(log, "ip_bwd_bias", where, db, db_ref);
    }
    const Tensor dx = poisoned(x.shape()), dx_ref = poisoned(x.shape());
    mine->backward_data(dy, w, dx);
    ref->backward_data(dy, w, dx_ref);
    expect_close(log, "ip_bwd_d", where, dx, dx_ref);
  }
  WARN(log.str());
}

TEST_CASE("onednn declines batch norm, so auto falls back to kokkos", "[onednn][batch_norm]") {
  const ops::BatchNormGeometry g{64, 8, 1e-5f};
  CHECK(ops::backend("onednn").make_batch_norm(g) == nullptr);
  auto op = ops::OpFactory("auto").batch_norm(g, "bn1");
  REQUIRE(op != nullptr);
  CHECK(op->backend() == "kokkos");
}

TEST_CASE("onednn ops reject tensors of the wrong size", "[onednn]") {
  const ConvGeometry g = conv3d(1, 2, 3, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto op = ops::backend("onednn").make_conv(g);
  REQUIRE(op != nullptr);
  const Tensor x(g.input_shape()), w(g.weight_shape()), wrong(Shape{1, 4, 4, 4, 2});
  CHECK_THROWS_WITH(op->forward(x, w, Tensor(), wrong), Catch::Contains("output has shape [1, 4, 4, 4, 2]"));
}

#endif  // TESSERA_ENABLE_ONEDNN
