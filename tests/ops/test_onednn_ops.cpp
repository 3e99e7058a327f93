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

#include "support/backend_comparison.hpp"
#include "tessera/backends/onednn/onednn_backend.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/registry/backend_registry.hpp"
#include "tessera/registry/op_factory.hpp"

namespace {

using namespace tessera;
using ops::ConvGeometry;
using ops::PoolGeometry;
using ops::PoolKind;
using testing::ErrorLog;
using testing::compare_conv_2d_cases;
using testing::compare_conv_3d_cases;
using testing::compare_conv_transpose_cases;
using testing::compare_pool_cases;
using testing::compare_conv;
using testing::compare_pool;
using testing::conv2d;
using testing::conv3d;
using testing::expect_close;
using testing::poisoned;
using testing::pool;
using testing::random_tensor;

// oneDNN sums in other orders (and blocks channels) than im2col + gemm; both are float.
constexpr double tolerance = 1e-4;

}  // namespace

TEST_CASE("onednn conv matches kokkos in 3D: channels, odd sizes, stride, dilation, kernel, padding",
          "[onednn][conv]") {
  ErrorLog log("onednn", tolerance);
  compare_conv_3d_cases("onednn", log, 100);
  WARN(log.str());
}

TEST_CASE("onednn conv matches kokkos in 2D", "[onednn][conv]") {
  ErrorLog log("onednn", tolerance);
  compare_conv_2d_cases("onednn", log, 200);
  WARN(log.str());
}

TEST_CASE("onednn conv serves transposed convolution: backward_data with stride 2 upsamples as kokkos does",
          "[onednn][conv]") {
  // A ConvTranspose layer runs the adjoint convolution: its forward is backward_data of a
  // strided conv from the upsampled size, its input gradient that conv's forward.
  ErrorLog log("onednn", tolerance);
  compare_conv_transpose_cases("onednn", log);
  WARN(log.str());
}

TEST_CASE("onednn conv gives identical results on repeated calls", "[onednn][conv]") {
  const ConvGeometry g = conv3d(2, 4, 16, {5, 7, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto op = registry::backend("onednn").make_conv(g);
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
  auto conv = registry::backend("onednn").make_conv(g);
  auto ref = registry::backend("kokkos").make_conv(g);
  auto pool_op = registry::backend("onednn").make_pool(pg);
  auto pool_ref = registry::backend("kokkos").make_pool(pg);
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
  ErrorLog log("onednn", tolerance);
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
  ErrorLog log("onednn", tolerance);
  compare_pool_cases("onednn", log, 400);
  WARN(log.str());
}

TEST_CASE("onednn pooling backward before forward is an error for max pooling", "[onednn][pool]") {
  const PoolGeometry g = pool(PoolKind::max, 3, 4, {4, 4, 4}, 2, 2, 0);
  auto op = registry::backend("onednn").make_pool(g);
  REQUIRE(op != nullptr);
  const Tensor x(g.input_shape()), dy(g.output_shape()), dx(g.input_shape());
  CHECK_THROWS_WITH(op->backward(x, dy, dx), Catch::Contains("backward called before forward"));
}

TEST_CASE("onednn activations match kokkos forward and backward", "[onednn][eltwise]") {
  ErrorLog log("onednn", tolerance);
  const std::vector<ops::EltwiseDesc> descs{{ops::EltwiseKind::relu, 0.0f}, {ops::EltwiseKind::leaky_relu, 0.1f},
                                            {ops::EltwiseKind::elu, 1.0f},  {ops::EltwiseKind::elu, 0.5f},
                                            {ops::EltwiseKind::tanh, 0.0f}, {ops::EltwiseKind::scale, 1.2f},
                                            {ops::EltwiseKind::sigmoid, 0.0f}};
  uint32_t seed = 500;
  for (const auto& d : descs) {
    INFO(d.str());
    auto mine = registry::backend("onednn").make_eltwise(d);
    auto ref = registry::backend("kokkos").make_eltwise(d);
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

TEST_CASE("onednn activations run in pieces give the same result as in one piece", "[onednn][eltwise]") {
  // Tensors past oneDNN's 32-bit indexing run in pieces; small pieces test the same path.
  const ops::EltwiseDesc d{ops::EltwiseKind::elu, 0.5f};
  auto whole = registry::backend("onednn").make_eltwise(d);
  auto pieces = onednn_backend::make_eltwise_in_pieces(d, 1000);
  const Shape s{2, 9, 9, 9, 7};  // 10206 elements: ten pieces of 1000 and one of 206
  const Tensor x = random_tensor(s, 77), dy = random_tensor(s, 78);
  const Tensor y = poisoned(s), y_pieces = poisoned(s), dx = poisoned(s), dx_pieces = poisoned(s);
  whole->forward(x, y);
  pieces->forward(x, y_pieces);
  whole->backward(x, dy, dx);
  pieces->backward(x, dy, dx_pieces);
  CHECK(y.to_host() == y_pieces.to_host());
  CHECK(dx.to_host() == dx_pieces.to_host());
  CHECK_THROWS_WITH(onednn_backend::make_eltwise_in_pieces(d, 0), Catch::Contains("outside [1, 2147483647]"));
}

TEST_CASE("onednn declines tensors past its 32-bit indexing, naming the tensor, so auto takes kokkos",
          "[onednn][conv]") {
  // A 2048³ convolution made oneDNN 2.6 divide by zero while creating its primitive. Only the
  // geometry is built here; nothing is allocated.
  const ConvGeometry g = conv3d(1, 4, 16, {2048, 2048, 2048}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  std::string why;
  CHECK(registry::backend("onednn").make_conv(g, &why) == nullptr);
  CHECK_THAT(why, Catch::Contains("a tensor of 34359738368 elements ([1, 2048, 2048, 2048, 4]) exceeds onednn's "
                                  "limit of 2147483647 elements per tensor"));
  CHECK(registry::backend("onednn").max_tensor_elements() == 2147483647);
  CHECK(registry::backend("kokkos").make_conv(g) != nullptr);
  ops::PoolGeometry p;
  p.batch = 1;
  p.channels = 300;
  p.in_size = {1024, 1024, 8};
  p.kernel = {2, 2, 2};
  p.stride = {2, 2, 2};
  CHECK(registry::backend("onednn").make_pool(p, &why) == nullptr);
  CHECK_THAT(why, Catch::Contains("exceeds onednn's limit"));
  CHECK(registry::backend("onednn").make_inner_product(ops::InnerProductGeometry{1, 65536, 65536}, &why) == nullptr);
  CHECK_THAT(why, Catch::Contains("([65536, 65536]) exceeds onednn's limit"));
}

TEST_CASE("onednn inner product matches kokkos", "[onednn][inner_product]") {
  ErrorLog log("onednn", tolerance);
  uint32_t seed = 600;
  for (const auto& g : {ops::InnerProductGeometry{2, 7, 5}, ops::InnerProductGeometry{1, 3, 1},
                        ops::InnerProductGeometry{4, 2048, 128}, ops::InnerProductGeometry{4, 128, 4}}) {
    const std::string where =
        std::to_string(g.batch) + "x" + std::to_string(g.in_features) + "->" + std::to_string(g.out_features);
    INFO(where);
    auto mine = registry::backend("onednn").make_inner_product(g);
    REQUIRE(mine != nullptr);
    REQUIRE(mine->backend() == "onednn");
    auto ref = registry::backend("kokkos").make_inner_product(g);
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
  const ops::BatchNormGeometry g{64, 8, 1e-5f, ElementType::fp32, {}};
  CHECK(registry::backend("onednn").make_batch_norm(g) == nullptr);
  auto op = registry::OpFactory("auto").batch_norm(g, "bn1");
  REQUIRE(op != nullptr);
  CHECK(op->backend() == "kokkos");
}

TEST_CASE("onednn ops reject tensors of the wrong size", "[onednn]") {
  const ConvGeometry g = conv3d(1, 2, 3, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  auto op = registry::backend("onednn").make_conv(g);
  REQUIRE(op != nullptr);
  const Tensor x(g.input_shape()), w(g.weight_shape()), wrong(Shape{1, 4, 4, 4, 2});
  CHECK_THROWS_WITH(op->forward(x, w, Tensor(), wrong), Catch::Contains("output has shape [1, 4, 4, 4, 2]"));
}

#endif  // TESSERA_ENABLE_ONEDNN
