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

#include "support/backend_comparison.hpp"
#include "tessera/backends/cudnn/cudnn_backend.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/registry/backend_registry.hpp"
#include "tessera/registry/op_factory.hpp"

namespace {

using namespace tessera;
using ops::ConvGeometry;
using ops::PoolGeometry;
using ops::PoolKind;
using testing::ErrorLog;
using testing::compare_conv;
using testing::compare_conv_2d_cases;
using testing::compare_conv_3d_cases;
using testing::compare_conv_transpose_cases;
using testing::compare_pool_cases;
using testing::compare_pool;
using testing::conv2d;
using testing::conv3d;
using testing::expect_close;
using testing::poisoned;
using testing::pool;
using testing::random_tensor;
using testing::relative_error;
using cudnn_backend::Options;

// cuDNN's kernels (implicit gemm, Winograd, FFT) sum in other orders than im2col + gemm; both
// are float32 with FMA math.
constexpr double tolerance = 1e-4;
// TF32 rounds the products' inputs to 10 mantissa bits (relative 2^-11 each).
constexpr double tf32_tolerance = 5e-3;

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
  ErrorLog log("cudnn", tolerance);
  compare_conv_3d_cases("cudnn", log, 100);
  WARN(log.str());
}

TEST_CASE("cudnn conv matches kokkos in 2D", "[cudnn][conv]") {
  ErrorLog log("cudnn", tolerance);
  compare_conv_2d_cases("cudnn", log, 200);
  WARN(log.str());
}

TEST_CASE("cudnn conv serves transposed convolution: backward_data with stride 2 upsamples as kokkos does",
          "[cudnn][conv]") {
  // A ConvTranspose layer runs the adjoint convolution: its forward is backward_data of a
  // strided conv from the upsampled size (which may exceed what the conv reads: output
  // padding), its input gradient that conv's forward.
  ErrorLog log("cudnn", tolerance);
  compare_conv_transpose_cases("cudnn", log);
  WARN(log.str());
}

TEST_CASE("cudnn conv gives identical results on repeated calls", "[cudnn][conv]") {
  const ConvGeometry g = conv3d(2, 4, 16, {5, 7, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto op = registry::backend("cudnn").make_conv(g);
  REQUIRE(op != nullptr);
  const auto first = run_all_passes(*op, g, 1);
  for (int repeat = 0; repeat < 3; ++repeat) CHECK(run_all_passes(*op, g, 1) == first);
  // A second op of the same geometry chooses the same algorithms, so it agrees bit for bit.
  auto again = registry::backend("cudnn").make_conv(g);
  REQUIRE(again != nullptr);
  CHECK(run_all_passes(*again, g, 1) == first);
}

TEST_CASE("cudnn conv with timed algorithm choice matches kokkos and repeats exactly", "[cudnn][conv]") {
  const ScopedOptions timed({/*tf32=*/false, /*benchmark=*/true});
  ErrorLog log("cudnn", tolerance);
  compare_conv_3d_cases("cudnn", log, 700);
  compare_conv("cudnn", conv2d(2, 16, 32, 12, 10, 3, 1, 1, 1), log, 790);
  WARN(log.str());
  // The choice is made on the first call of each pass and kept: later calls repeat it.
  const ConvGeometry g = conv3d(2, 16, 32, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto op = registry::backend("cudnn").make_conv(g);
  REQUIRE(op != nullptr);
  const auto first = run_all_passes(*op, g, 5);
  CHECK(run_all_passes(*op, g, 5) == first);
}

TEST_CASE("cudnn conv allowing non-deterministic algorithms matches kokkos", "[cudnn][conv]") {
  Options o;
  o.deterministic = false;
  o.benchmark = true;
  const ScopedOptions any(o);
  ErrorLog log("cudnn", tolerance);
  compare_conv_3d_cases("cudnn", log, 750);
  compare_conv("cudnn", conv3d(4, 4, 32, {32, 32, 32}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, 760);
  WARN(log.str());
}

TEST_CASE("cudnn weight gradient on channels-first copies matches kokkos", "[cudnn][conv]") {
  for (const bool benchmark : {false, true}) {
    Options o;
    o.benchmark = benchmark;
    o.weight_gradient = Options::WeightGradient::channels_first;
    const ScopedOptions forced(o);
    ErrorLog log("cudnn", tolerance);
    compare_conv_3d_cases("cudnn", log, 950);
    compare_conv("cudnn", conv2d(2, 3, 8, 12, 10, 3, 1, 1, 1), log, 990);
    WARN(log.str());
  }
}

TEST_CASE("the few-channel weight gradient kernel matches kokkos: 3x3x3 and 3x3, padding, stride, dilation",
          "[cudnn][conv]") {
  for (const bool benchmark : {false, true}) {
    Options o;
    o.benchmark = benchmark;
    o.weight_gradient = Options::WeightGradient::few_channel_kernel;
    const ScopedOptions forced(o);
    ErrorLog log("cudnn", tolerance);
    compare_conv("cudnn", conv3d(2, 4, 32, {9, 10, 11}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, 1000);
    compare_conv("cudnn", conv3d(3, 1, 5, {7, 6, 9}, {3, 3, 3}, {2, 1, 2}, {0, 1, 1}, {1, 1, 1}), log, 1010);
    compare_conv("cudnn", conv3d(2, 3, 16, {8, 9, 7}, {3, 3, 3}, {1, 1, 1}, {2, 2, 2}, {2, 2, 2}), log, 1020);
    compare_conv("cudnn", conv3d(1, 4, 128, {20, 20, 20}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, 1030);
    compare_conv("cudnn", conv2d(2, 3, 8, 12, 10, 3, 1, 1, 1), log, 1040);
    compare_conv("cudnn", conv2d(2, 1, 16, 9, 13, 3, 2, 0, 1), log, 1050);
    WARN(log.str());
  }
}

/// `t`'s values in a tensor that starts one float (4 bytes) into a larger one: off cuDNN's
/// 16-byte vector boundary, as a slab of a halo-padded tensor can be.
Tensor misaligned_copy(const Tensor& t) {
  const Tensor whole(Shape{t.numel() + 4}, "test_misaligned");
  whole.fill(7.0f);
  Tensor part = whole.slice(1, t.shape());
  deep_copy(part, t);
  return part;
}

TEST_CASE("cudnn conv on operands off a 16-byte boundary matches kokkos", "[cudnn][conv]") {
  const ConvGeometry g = conv3d(2, 3, 5, {5, 7, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto mine = registry::backend("cudnn").make_conv(g);
  auto ref = registry::backend("kokkos").make_conv(g);
  REQUIRE(mine != nullptr);
  const Tensor x = random_tensor(g.input_shape(), 900), w = random_tensor(g.weight_shape(), 901);
  const Tensor b = random_tensor(Shape{g.out_channels}, 902), dy = random_tensor(g.output_shape(), 903);
  const Tensor xm = misaligned_copy(x), wm = misaligned_copy(w), dym = misaligned_copy(dy);
  const Tensor y = misaligned_copy(poisoned(g.output_shape())), y_ref = poisoned(g.output_shape());
  const Tensor dx = misaligned_copy(poisoned(g.input_shape())), dx_ref = poisoned(g.input_shape());
  const Tensor dw = misaligned_copy(poisoned(g.weight_shape())), dw_ref = poisoned(g.weight_shape());
  const Tensor db = misaligned_copy(poisoned(Shape{g.out_channels})), db_ref = poisoned(Shape{g.out_channels});
  mine->forward(xm, wm, misaligned_copy(b), y);
  mine->backward_data(dym, wm, dx);
  mine->backward_weights(xm, dym, dw, db);
  ref->forward(x, w, b, y_ref);
  ref->backward_data(dy, w, dx_ref);
  ref->backward_weights(x, dy, dw_ref, db_ref);
  ErrorLog log("cudnn", tolerance);
  expect_close(log, "conv_fwd", g.str(), y, y_ref);
  expect_close(log, "conv_bwd_d", g.str(), dx, dx_ref);
  expect_close(log, "conv_bwd_w", g.str(), dw, dw_ref);
  expect_close(log, "conv_bwd_bias", g.str(), db, db_ref);
}

TEST_CASE("cudnn conv with TF32 allowed stays within TF32 accuracy", "[cudnn][conv]") {
  const ScopedOptions tf32({/*tf32=*/true, /*benchmark=*/false});
  ErrorLog log("cudnn", tf32_tolerance);
  compare_conv("cudnn", conv3d(2, 16, 32, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, 800);
  compare_conv("cudnn", conv2d(2, 16, 32, 12, 10, 3, 1, 1, 1), log, 810);
  WARN(log.str());
}

TEST_CASE("cudnn ops share one grow-only workspace: steady-state calls allocate nothing", "[cudnn][conv]") {
  const std::vector<ConvGeometry> geometries{
      conv3d(2, 16, 32, {8, 8, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
      conv3d(2, 32, 8, {8, 8, 8}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}),
      conv2d(2, 8, 16, 16, 16, 3, 2, 1, 1)};
  std::vector<std::unique_ptr<ops::ConvOp>> convs;
  for (const auto& g : geometries) {
    convs.push_back(registry::backend("cudnn").make_conv(g));
    REQUIRE(convs.back() != nullptr);
  }
  for (size_t i = 0; i < convs.size(); ++i) run_all_passes(*convs[i], geometries[i], 900);
  const size_t after_first_step = cudnn_backend::workspace_bytes();
  for (int step = 0; step < 2; ++step)
    for (size_t i = 0; i < convs.size(); ++i) run_all_passes(*convs[i], geometries[i], 900);
  CHECK(cudnn_backend::workspace_bytes() == after_first_step);
}

TEST_CASE("cudnn pooling matches kokkos: max and average, stride 2, padding, 2D and 3D", "[cudnn][pool]") {
  ErrorLog log("cudnn", tolerance);
  compare_pool_cases("cudnn", log, 400);
  WARN(log.str());
}

TEST_CASE("cudnn max pooling backward uses its own copy of the forward output", "[cudnn][pool]") {
  const PoolGeometry g = pool(PoolKind::max, 3, 8, {6, 6, 6}, 2, 2, 0);
  auto mine = registry::backend("cudnn").make_pool(g);
  auto ref = registry::backend("kokkos").make_pool(g);
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
  auto op = registry::backend("cudnn").make_pool(g);
  REQUIRE(op != nullptr);
  const Tensor x(g.input_shape()), dy(g.output_shape()), dx(g.input_shape());
  CHECK_THROWS_WITH(op->backward(x, dy, dx), Catch::Contains("backward called before forward"));
}

TEST_CASE("auto takes cudnn for convolution and pooling", "[cudnn]") {
  REQUIRE(!registry::available_backends().empty());
  CHECK(registry::available_backends().front() == "cudnn");
  const registry::OpFactory factory("auto");
  const ConvGeometry g = conv3d(2, 4, 8, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  CHECK(factory.conv(g, "conv1")->backend() == "cudnn");
  CHECK(factory.pool(pool(PoolKind::max, 3, 8, {6, 6, 6}, 2, 2, 0), "pool1")->backend() == "cudnn");
}

TEST_CASE("cudnn declines batch norm, activations and inner products, so auto runs them on kokkos",
          "[cudnn][batch_norm][eltwise][inner_product]") {
  const registry::OpFactory factory("auto");
  const ops::BatchNormGeometry bn{64, 8, 1e-5f};
  CHECK(registry::backend("cudnn").make_batch_norm(bn) == nullptr);
  CHECK(factory.batch_norm(bn, "bn1")->backend() == "kokkos");
  const ops::EltwiseDesc leaky{ops::EltwiseKind::leaky_relu, 0.01f};
  CHECK(registry::backend("cudnn").make_eltwise(leaky) == nullptr);
  CHECK(factory.eltwise(leaky, "act1")->backend() == "kokkos");
  const ops::InnerProductGeometry ip{4, 128, 64};
  CHECK(registry::backend("cudnn").make_inner_product(ip) == nullptr);
  CHECK(factory.inner_product(ip, "fc1")->backend() == "kokkos");
  CHECK_THROWS_WITH(registry::OpFactory("cudnn").eltwise(leaky, "act1"),
                    Catch::Contains("backend 'cudnn' does not support leaky_relu"));
}

TEST_CASE("cudnn declines a convolution beyond its 32-bit tensor sizes", "[cudnn][conv]") {
  // 2^31 input elements: the descriptors' int dimensions and strides cannot describe it.
  const ConvGeometry g = conv3d(2, 16, 16, {1024, 256, 256}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  CHECK(registry::backend("cudnn").make_conv(g) == nullptr);
}

TEST_CASE("cudnn ops reject tensors of the wrong size", "[cudnn]") {
  const ConvGeometry g = conv3d(1, 2, 3, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto op = registry::backend("cudnn").make_conv(g);
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
  CHECK_THAT(v, Catch::Contains("deterministic"));
}

#endif  // TESSERA_ENABLE_CUDNN
