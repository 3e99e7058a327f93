#pragma once
// Compares one backend's ops with the Kokkos reference ops on the same random inputs: forward
// and every gradient, outputs poisoned first so an element an op fails to write shows. Shared
// by the backend op tests (tests/ops/test_onednn_ops.cpp, test_cudnn_ops.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/conv_geometry.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/registry/backend_registry.hpp"

namespace tessera::testing {

/// The worst relative error seen per quantity, reported once per test case.
class ErrorLog {
 public:
  ErrorLog(std::string backend, double limit) : backend_(std::move(backend)), limit_(limit) {}
  double limit() const { return limit_; }
  void record(const std::string& what, double error) { worst_[what] = std::max(worst_[what], error); }
  std::string str() const {
    std::ostringstream s;
    s << backend_ << " vs kokkos, worst relative error (tolerance " << limit_ << "):";
    for (const auto& [what, e] : worst_) s << " " << what << "=" << e;
    return s.str();
  }

 private:
  std::string backend_;
  double limit_;
  std::map<std::string, double> worst_;
};

inline Tensor random_tensor(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (auto& e : v) e = u(rng);
  Tensor t(shape);
  t.copy_from_host(v);
  return t;
}

/// A tensor full of a value no op produces, so that an element an op fails to write shows.
inline Tensor poisoned(const Shape& shape) {
  Tensor t(shape);
  t.fill(1234.5f);
  return t;
}

/// max |a − b| / max |b|: the error relative to the size of the reference result.
inline double relative_error(const Tensor& a, const Tensor& reference) {
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

inline void expect_close(ErrorLog& log, const std::string& what, const std::string& where, const Tensor& a,
                  const Tensor& reference) {
  const double e = relative_error(a, reference);
  log.record(what, e);
  INFO(where << ": " << what << " relative error " << e);
  CHECK(e <= log.limit());
}

inline ops::ConvGeometry conv2d(int64_t n, int64_t ci, int64_t co, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p,
                    int64_t d) {
  ops::ConvGeometry g = conv3d(n, ci, co, {1, h, w}, {1, k, k}, {1, s, s}, {0, p, p}, {1, d, d});
  g.spatial_rank = 2;
  g.validate("test");
  return g;
}

/// Every pass of `g` by two ops, with and without bias, from the same random inputs.
inline void compare_conv_ops(ops::ConvOp& mine_op, ops::ConvOp& ref_op, const ops::ConvGeometry& g, ErrorLog& log,
                             uint32_t seed) {
  const std::string where = g.str();
  INFO(where);
  ops::ConvOp* mine = &mine_op;
  ops::ConvOp* ref = &ref_op;
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

/// Every pass of `g` on `backend` and on the Kokkos backend.
inline void compare_conv(const std::string& backend, const ops::ConvGeometry& g, ErrorLog& log, uint32_t seed) {
  INFO(g.str());
  auto mine = registry::backend(backend).make_conv(g);
  auto ref = registry::backend("kokkos").make_conv(g);
  REQUIRE(mine != nullptr);
  REQUIRE(mine->backend() == backend);
  compare_conv_ops(*mine, *ref, g, log, seed);
}

inline void compare_pool(const std::string& backend, const ops::PoolGeometry& g, ErrorLog& log, uint32_t seed) {
  const std::string where = g.str();
  INFO(where);
  auto mine = registry::backend(backend).make_pool(g);
  auto ref = registry::backend("kokkos").make_pool(g);
  REQUIRE(mine != nullptr);
  REQUIRE(mine->backend() == backend);
  const Tensor x = random_tensor(g.input_shape(), seed), dy = random_tensor(g.output_shape(), seed + 1);
  const Tensor y = poisoned(g.output_shape()), y_ref = poisoned(g.output_shape());
  mine->forward(x, y);
  ref->forward(x, y_ref);
  const std::string kind = g.kind == ops::PoolKind::max ? "max" : "avg";
  expect_close(log, kind + "_pool_fwd", where, y, y_ref);
  const Tensor dx = poisoned(g.input_shape()), dx_ref = poisoned(g.input_shape());
  mine->backward(x, dy, dx);
  ref->backward(x, dy, dx_ref);
  expect_close(log, kind + "_pool_bwd", where, dx, dx_ref);
}

inline ops::PoolGeometry pool(ops::PoolKind kind, int rank, int64_t c, std::array<int64_t, 3> in, int64_t k, int64_t s, int64_t p) {
  ops::PoolGeometry g;
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


/// The 3D convolution cases every backend is checked on: one input channel, stride, dilation,
/// 1x1x1, 2x2x2 stride 2, padding wider than the kernel reaches, mixed extents, and channel
/// counts in full vector blocks.
inline void compare_conv_3d_cases(const std::string& backend, ErrorLog& log, uint32_t seed) {
  const std::array<int64_t, 3> odd{5, 7, 6};
  compare_conv(backend, conv3d(2, 1, 4, odd, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, seed += 10);
  compare_conv(backend, conv3d(2, 4, 8, odd, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), log, seed += 10);
  compare_conv(backend, conv3d(2, 4, 4, odd, {3, 3, 3}, {1, 1, 1}, {2, 2, 2}, {2, 2, 2}), log, seed += 10);
  compare_conv(backend, conv3d(2, 4, 16, odd, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}), log, seed += 10);
  compare_conv(backend, conv3d(2, 8, 4, odd, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}), log, seed += 10);
  compare_conv(backend, conv3d(2, 4, 4, odd, {1, 1, 1}, {1, 1, 1}, {2, 2, 2}, {1, 1, 1}), log, seed += 10);
  compare_conv(backend, conv3d(2, 3, 5, odd, {3, 1, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}), log, seed += 10);
  compare_conv(backend, conv3d(2, 16, 32, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), log, seed += 10);
}

/// The 2D convolution cases: one input channel, stride, dilation, 1x1, 2x2 stride 2, full
/// vector blocks.
inline void compare_conv_2d_cases(const std::string& backend, ErrorLog& log, uint32_t seed) {
  compare_conv(backend, conv2d(2, 1, 4, 9, 11, 3, 1, 1, 1), log, seed += 10);
  compare_conv(backend, conv2d(2, 4, 8, 9, 11, 3, 2, 1, 1), log, seed += 10);
  compare_conv(backend, conv2d(2, 4, 4, 9, 11, 3, 1, 2, 2), log, seed += 10);
  compare_conv(backend, conv2d(2, 4, 8, 9, 11, 1, 1, 0, 1), log, seed += 10);
  compare_conv(backend, conv2d(2, 8, 4, 9, 11, 2, 2, 0, 1), log, seed += 10);
  compare_conv(backend, conv2d(2, 16, 32, 12, 10, 3, 1, 1, 1), log, seed += 10);
}

/// The convolutions a ConvTranspose layer runs as adjoints: its forward is backward_data of a
/// strided conv from the upsampled size, its input gradient that conv's forward.
inline void compare_conv_transpose_cases(const std::string& backend, ErrorLog& log) {
  compare_conv(backend, conv3d(2, 4, 8, {8, 8, 8}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}), log, 300);
  compare_conv(backend, conv3d(2, 4, 8, {9, 9, 9}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), log, 310);
  compare_conv(backend, conv3d(2, 4, 8, {10, 10, 10}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), log, 320);
  compare_conv(backend, conv2d(2, 8, 1, 10, 12, 2, 2, 0, 1), log, 330);
}

/// Max and average pooling: one channel, stride 2 with padding, overlapping windows, full
/// vector blocks, padding as wide as allowed, 2D.
inline void compare_pool_cases(const std::string& backend, ErrorLog& log, uint32_t seed) {
  for (const ops::PoolKind kind : {ops::PoolKind::max, ops::PoolKind::average}) {
    compare_pool(backend, pool(kind, 3, 1, {5, 7, 6}, 2, 2, 0), log, seed += 10);
    compare_pool(backend, pool(kind, 3, 4, {5, 7, 6}, 3, 2, 1), log, seed += 10);
    compare_pool(backend, pool(kind, 3, 4, {5, 7, 6}, 3, 1, 1), log, seed += 10);
    compare_pool(backend, pool(kind, 3, 16, {8, 8, 8}, 2, 2, 0), log, seed += 10);
    compare_pool(backend, pool(kind, 3, 3, {6, 5, 7}, 3, 3, 2), log, seed += 10);
    compare_pool(backend, pool(kind, 2, 1, {1, 9, 11}, 2, 2, 0), log, seed += 10);
    compare_pool(backend, pool(kind, 2, 4, {1, 9, 11}, 3, 2, 1), log, seed += 10);
  }
}

}  // namespace tessera::testing
