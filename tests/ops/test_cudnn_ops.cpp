// The cuDNN backend's ops against the Kokkos reference ops (Kokkos CUDA kernels in the same
// build) on fresh random inputs: forward and every gradient, over channel counts, odd sizes,
// strides, dilations, kernels and paddings in 2D and 3D, under heuristic and timed algorithm
// choice, with and without TF32; plus repeatability, the shared workspace, and the cases the
// backend leaves to Kokkos. Needs a GPU: built in CUDA builds with TESSERA_ENABLE_CUDNN.
#include "tessera/build_info.hpp"

#if TESSERA_ENABLE_CUDNN

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/backends/cudnn/cudnn_backend.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/ops/backend.hpp"

namespace {

using namespace tessera;
using ops::ConvGeometry;
using ops::PoolGeometry;
using ops::PoolKind;

// cuDNN's kernels (implicit gemm, Winograd, FFT) sum in other orders than im2col + gemm; both
// are float32 with FMA math.
constexpr double tolerance = 1e-4;
// TF32 rounds the products' inputs to 10 mantissa bits (relative 2^-11 each).
constexpr double tf32_tolerance = 5e-3;

/// The worst relative error seen per quantity, reported once per test case.
class ErrorLog {
 public:
  explicit ErrorLog(double limit = tolerance) : limit_(limit) {}
  double limit() const { return limit_; }
  void record(const std::string& what, double error) { worst_[what] = std::max(worst_[what], error); }
  std::string str() const {
    std::ostringstream s;
    s << "cudnn vs kokkos, worst relative error (tolerance " << limit_ << "):";
    for (const auto& [what, e] : worst_) s << " " << what << "=" << e;
    return s.str();
  }

 private:
  double limit_;
  std::map<std::string, double> worst_;
};

/// Sets the backend's options for one test case and puts the previous ones back.
class ScopedOptions {
 public:
  explicit ScopedOptions(const cudnn_backend::Options& o) : saved_(cudnn_backend::options()) {
    cudnn_backend::set_options(o);
  }
  ~ScopedOptions() { cudnn_backend::set_options(saved_); }
  ScopedOptions(const ScopedOptions&) = delete;
  ScopedOptions& operator=(const ScopedOptions&) = delete;

 private:
  cudnn_backend::Options saved_;
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
  CHECK(e <= log.limit());
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
  auto mine = ops::backend("cudnn").make_conv(g);
  auto ref = ops::backend("kokkos").make_conv(g);
  REQUIRE(mine != nullptr);
  REQUIRE(mine->backend() == "cudnn");
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

/// The 3D cases: one input channel, stride, dilation, 1x1x1, 2x2x2 stride 2, padding wider
/// than the kernel reaches, mixed extents, and channel counts in full vector blocks.
void compare_conv_3d_cases(ErrorLog& log, uint32_t seed) {
  const std::array<int64_t, 3> odd{5, 7, 6};
  compare_conv(conv3d(2, 1, 4, odd, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, seed += 10);
  compare_conv(conv3d(2, 4, 8, odd, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), log, seed += 10);
  compare_conv(conv3d(2, 4, 4, odd, {3, 3, 3}, {1, 1, 1}, {2, 2, 2}, {2, 2, 2}), log, seed += 10);
  compare_conv(conv3d(2, 4, 16, odd, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}), log, seed += 10);
  compare_conv(conv3d(2, 8, 4, odd, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}), log, seed += 10);
  compare_conv(conv3d(2, 4, 4, odd, {1, 1, 1}, {1, 1, 1}, {2, 2, 2}, {1, 1, 1}), log, seed += 10);
  compare_conv(conv3d(2, 3, 5, odd, {3, 1, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}), log, seed += 10);
  compare_conv(conv3d(2, 16, 32, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, seed += 10);
}

void compare_pool(const PoolGeometry& g, ErrorLog& log, uint32_t seed) {
  const std::string where = g.str();
  INFO(where);
  auto mine = ops::backend("cudnn").make_pool(g);
  auto ref = ops::backend("kokkos").make_pool(g);
  REQUIRE(mine != nullptr);
  REQUIRE(mine->backend() == "cudnn");
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

/// Runs every pass of `op` and returns the results, for comparing runs bit for bit.
std::vector<std::vector<float>> run_all_passes(ops::ConvOp& op, const ConvGeometry& g, uint32_t seed) {
  const Tensor x = random_tensor(g.input_shape(), seed), w = random_tensor(g.weight_shape(), seed + 1);
  const Tensor b = random_tensor(Shape{g.out_channels}, seed + 2), dy = random_tensor(g.output_shape(), seed + 3);
  const Tensor y = poisoned(g.output_shape()), dx = poisoned(g.input_shape()), dw = poisoned(g.weight_shape());
  const Tensor db = poisoned(Shape{g.out_channels});
  op.forward(x, w, b, y);
  op.backward_data(dy, w, dx);
  op.backward_weights(x, dy, dw, db);
  return {y.to_host(), dx.to_host(), dw.to_host(), db.to_host()};
}

}  // namespace

TEST_CASE("cudnn conv matches kokkos in 3D: channels, odd sizes, stride, dilation, kernel, padding",
          "[cudnn][conv]") {
  ErrorLog log;
  compare_conv_3d_cases(log, 100);
  WARN(log.str());
}

TEST_CASE("cudnn conv matches kokkos in 2D", "[cudnn][conv]") {
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

TEST_CASE("cudnn conv serves transposed convolution: backward_data with stride 2 upsamples as kokkos does",
          "[cudnn][conv]") {
  // A ConvTranspose layer runs the adjoint convolution: its forward is backward_data of a
  // strided conv from the upsampled size (which may exceed what the conv reads: output
  // padding), its input gradient that conv's forward.
  ErrorLog log;
  compare_conv(conv3d(2, 4, 8, {8, 8, 8}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}), log, 300);
  compare_conv(conv3d(2, 4, 8, {9, 9, 9}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), log, 310);
  compare_conv(conv3d(2, 4, 8, {10, 10, 10}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), log, 320);
  compare_conv(conv2d(2, 8, 1, 10, 12, 2, 2, 0, 1), log, 330);
  WARN(log.str());
}

TEST_CASE("cudnn conv gives identical results on repeated calls", "[cudnn][conv]") {
  const ConvGeometry g = conv3d(2, 4, 16, {5, 7, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto op = ops::backend("cudnn").make_conv(g);
  REQUIRE(op != nullptr);
  const auto first = run_all_passes(*op, g, 1);
  for (int repeat = 0; repeat < 3; ++repeat) CHECK(run_all_passes(*op, g, 1) == first);
  // A second op of the same geometry chooses the same algorithms, so it agrees bit for bit.
  auto again = ops::backend("cudnn").make_conv(g);
  REQUIRE(again != nullptr);
  CHECK(run_all_passes(*again, g, 1) == first);
}

TEST_CASE("cudnn conv with timed algorithm choice matches kokkos and repeats exactly", "[cudnn][conv]") {
  const ScopedOptions timed({/*tf32=*/false, /*benchmark=*/true});
  ErrorLog log;
  compare_conv_3d_cases(log, 700);
  compare_conv(conv2d(2, 16, 32, 12, 10, 3, 1, 1, 1), log, 790);
  WARN(log.str());
  // The choice is made on the first call of each pass and kept: later calls repeat it.
  const ConvGeometry g = conv3d(2, 16, 32, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto op = ops::backend("cudnn").make_conv(g);
  REQUIRE(op != nullptr);
  const auto first = run_all_passes(*op, g, 5);
  CHECK(run_all_passes(*op, g, 5) == first);
}

TEST_CASE("cudnn conv with TF32 allowed stays within TF32 accuracy", "[cudnn][conv]") {
  const ScopedOptions tf32({/*tf32=*/true, /*benchmark=*/false});
  ErrorLog log(tf32_tolerance);
  compare_conv(conv3d(2, 16, 32, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, 800);
  compare_conv(conv2d(2, 16, 32, 12, 10, 3, 1, 1, 1), log, 810);
  WARN(log.str());
}

TEST_CASE("cudnn ops share one grow-only workspace: steady-state calls allocate nothing", "[cudnn][conv]") {
  const std::vector<ConvGeometry> geometries{
      conv3d(2, 16, 32, {8, 8, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
      conv3d(2, 32, 8, {8, 8, 8}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}),
      conv2d(2, 8, 16, 16, 16, 3, 2, 1, 1)};
  std::vector<std::unique_ptr<ops::ConvOp>> convs;
  for (const auto& g : geometries) {
    convs.push_back(ops::backend("cudnn").make_conv(g));
    REQUIRE(convs.back() != nullptr);
  }
  for (size_t i = 0; i < convs.size(); ++i) run_all_passes(*convs[i], geometries[i], 900);
  const size_t after_first_step = cudnn_backend::workspace_bytes();
  for (int step = 0; step < 2; ++step)
    for (size_t i = 0; i < convs.size(); ++i) run_all_passes(*convs[i], geometries[i], 900);
  CHECK(cudnn_backend::workspace_bytes() == after_first_step);
}

TEST_CASE("cudnn pooling matches kokkos: max and average, stride 2, padding, 2D and 3D", "[cudnn][pool]") {
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

TEST_CASE("cudnn max pooling backward uses its own copy of the forward output", "[cudnn][pool]") {
  const PoolGeometry g = pool(PoolKind::max, 3, 8, {6, 6, 6}, 2, 2, 0);
  auto mine = ops::backend("cudnn").make_pool(g);
  auto ref = ops::backend("kokkos").make_pool(g);
  REQUIRE(mine != nullptr);
  const Tensor x = random_tensor(g.input_shape(), 31), dy = random_tensor(g.output_shape(), 32);
  const Tensor y(g.output_shape()), y_ref(g.output_shape());
  mine->forward(x, y);
  ref->forward(x, y_ref);
  y.fill(-7.0f);  // the caller reuses its output buffer before backward
  const Tensor dx = poisoned(g.input_shape()), dx_ref = poisoned(g.input_shape());
  mine->backward(x, dy, dx);
  ref->backward(x, dy, dx_ref);
  CHECK(relative_error(dx, dx_ref) <= tolerance);
}

TEST_CASE("cudnn pooling backward before forward is an error for max pooling", "[cudnn][pool]") {
  const PoolGeometry g = pool(PoolKind::max, 3, 4, {4, 4, 4}, 2, 2, 0);
  auto op = ops::backend("cudnn").make_pool(g);
  REQUIRE(op != nullptr);
  const Tensor x(g.input_shape()), dy(g.output_shape()), dx(g.input_shape());
  CHECK_THROWS_WITH(op->backward(x, dy, dx), Catch::Contains("backward called before forward"));
}

TEST_CASE("auto takes cudnn for convolution and pooling", "[cudnn]") {
  REQUIRE(!ops::available_backends().empty());
  CHECK(ops::available_backends().front() == "cudnn");
  const ops::OpFactory factory("auto");
  const ConvGeometry g = conv3d(2, 4, 8, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  CHECK(factory.conv(g, "conv1")->backend() == "cudnn");
  CHECK(factory.pool(pool(PoolKind::max, 3, 8, {6, 6, 6}, 2, 2, 0), "pool1")->backend() == "cudnn");
}

TEST_CASE("cudnn declines batch norm, activations and inner products, so auto runs them on kokkos",
          "[cudnn][batch_norm][eltwise][inner_product]") {
  const ops::OpFactory factory("auto");
  const ops::BatchNormGeometry bn{64, 8, 1e-5f};
  CHECK(ops::backend("cudnn").make_batch_norm(bn) == nullptr);
  CHECK(factory.batch_norm(bn, "bn1")->backend() == "kokkos");
  const ops::EltwiseDesc leaky{ops::EltwiseKind::leaky_relu, 0.01f};
  CHECK(ops::backend("cudnn").make_eltwise(leaky) == nullptr);
  CHECK(factory.eltwise(leaky, "act1")->backend() == "kokkos");
  const ops::InnerProductGeometry ip{4, 128, 64};
  CHECK(ops::backend("cudnn").make_inner_product(ip) == nullptr);
  CHECK(factory.inner_product(ip, "fc1")->backend() == "kokkos");
  CHECK_THROWS_WITH(ops::OpFactory("cudnn").eltwise(leaky, "act1"),
                    Catch::Contains("backend 'cudnn' does not support leaky_relu"));
}

TEST_CASE("cudnn declines a convolution beyond its 32-bit tensor sizes", "[cudnn][conv]") {
  // 2^31 input elements: the descriptors' int dimensions and strides cannot describe it.
  const ConvGeometry g = conv3d(2, 16, 16, {1024, 256, 256}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  CHECK(ops::backend("cudnn").make_conv(g) == nullptr);
}

TEST_CASE("cudnn ops reject tensors of the wrong size", "[cudnn]") {
  const ConvGeometry g = conv3d(1, 2, 3, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto op = ops::backend("cudnn").make_conv(g);
  REQUIRE(op != nullptr);
  const Tensor x(g.input_shape()), w(g.weight_shape()), wrong(Shape{1, 4, 4, 4, 2});
  CHECK_THROWS_WITH(op->forward(x, w, Tensor(), wrong), Catch::Contains("cudnn convolution 3d 2->3"));
  CHECK_THROWS_WITH(op->forward(x, w, Tensor(), wrong), Catch::Contains("output has shape [1, 4, 4, 4, 2]"));
}

TEST_CASE("cudnn reports its version and precision", "[cudnn]") {
  const ScopedOptions defaults({/*tf32=*/false, /*benchmark=*/false});
  const std::string v = cudnn_backend::version_string();
  CHECK_THAT(v, Catch::StartsWith("cuDNN 9."));
  CHECK_THAT(v, Catch::Contains("TF32 off"));
  CHECK_THAT(v, Catch::Contains("heuristic algorithms"));
}

#endif  // TESSERA_ENABLE_CUDNN
