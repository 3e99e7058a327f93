// The fused convolution + max pool against the two layers run separately, on every compiled
// backend: the pooled output, the convolution's parameter gradients and (when asked for) its
// input gradient must agree for slabs that split the depth evenly and unevenly, depth rows and
// columns no window covers, strides, anisotropic windows, 2D, and convolutions with and without
// bias and depth padding.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "support/gradient_check.hpp"
#include "support/skip.hpp"
#include "support/test_parameters.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/conv_max_pool.hpp"
#include "tessera/registry/backend_registry.hpp"
#include "tessera/registry/op_factory.hpp"

namespace {

using namespace tessera;
using layers::ConvMaxPool;
using layers::ConvOptions;
using layers::PoolOptions;
using testing::random_vector;
using Floats = std::vector<float>;

struct Case {
  std::string what;
  Shape input;
  ConvOptions conv;
  PoolOptions pool;
  int64_t slab_bytes;
};

ConvOptions conv3d(int64_t filters, int64_t stride, int64_t padding, bool bias = true) {
  ConvOptions o;
  o.filters = filters;
  o.kernel = {3, 3, 3};
  o.stride = {stride, stride, stride};
  o.padding = {padding, padding, padding};
  o.bias = bias;
  return o;
}

PoolOptions max_pool(std::array<int64_t, 3> kernel, int spatial_rank = 3) {
  PoolOptions o;
  o.kind = ops::PoolKind::max;
  o.spatial_rank = spatial_rank;
  o.kernel = kernel;
  o.stride = kernel;
  return o;
}

std::vector<Case> cases() {
  ConvOptions conv2d = conv3d(5, 1, 1);
  conv2d.spatial_rank = 2;
  conv2d.kernel = {1, 3, 3};
  conv2d.stride = {1, 1, 1};
  conv2d.padding = {0, 1, 1};
  // One row of the first case's convolution output is 6·5·4 floats = 480 bytes.
  return {
      {"3D, slabs of 2 rows, a row and a column no window covers", Shape{2, 7, 6, 5, 3}, conv3d(4, 1, 1),
       max_pool({2, 2, 2}), 1000},
      {"3D, slabs of 4 rows and a last slab of 2", Shape{2, 7, 6, 5, 3}, conv3d(4, 1, 1), max_pool({2, 2, 2}), 2000},
      {"3D, one slab per sample", Shape{2, 7, 6, 5, 3}, conv3d(4, 1, 1), max_pool({2, 2, 2}), 1 << 20},
      {"3D, stride 2, no bias", Shape{1, 9, 9, 7, 2}, conv3d(3, 2, 1, false), max_pool({2, 2, 2}), 100},
      {"3D, no depth padding, window 1x2x2", Shape{2, 6, 6, 6, 4}, conv3d(8, 1, 0), max_pool({1, 2, 2}), 700},
      {"3D, window 3x3x3", Shape{1, 9, 9, 9, 1}, conv3d(4, 1, 1), max_pool({3, 3, 3}), 1500},
      {"2D, one slab per sample", Shape{2, 9, 8, 3}, conv2d, max_pool({1, 2, 2}, 2), 100},
  };
}

double max_rel_error(const Floats& a, const Floats& b, double floor) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst,
                     std::abs(static_cast<double>(a[i]) - b[i]) /
                         std::max({std::abs(static_cast<double>(a[i])), std::abs(static_cast<double>(b[i])), floor}));
  return worst;
}

/// ‖a − b‖ / ‖b‖ (0 for two empty vectors).
double norm_error(const Floats& a, const Floats& b) {
  double d = 0.0, n = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    n += static_cast<double>(b[i]) * b[i];
  }
  return n > 0.0 ? std::sqrt(d / n) : 0.0;
}

struct Result {
  Floats output, weight_grad, bias_grad, input_grad;  // input_grad empty when not asked for
};

Result run_fused(const Case& c, registry::OpFactory& factory, const Tensor& x, const Tensor& dy, bool want_dx,
                 int repeats) {
  testing::TestParameters params;
  layers::LayerContext ctx;
  ctx.ops = &factory;
  ctx.precision = x.type();
  auto conv = std::make_unique<layers::Conv>("c", c.conv);
  ConvMaxPool fused(std::move(conv), "p", c.pool, c.slab_bytes);
  fused.setup({c.input}, ctx, params);
  const Tensor y(fused.output_shape({c.input}), x.type());
  const Tensor dx = want_dx ? Tensor(c.input, x.type()) : Tensor();
  Result r;
  for (int i = 0; i < repeats; ++i) {  // a second step reuses every buffer and must agree
    y.fill(1e30f);
    params["c.weight"].grad.fill(1e30f);
    if (c.conv.bias) params["c.bias"].grad.fill(1e30f);
    if (want_dx) dx.fill(1e30f);
    fused.forward({x}, y, {});
    fused.backward({x}, y, dy, {dx}, {});
    Result now{y.to_host(), params["c.weight"].grad.to_host(), c.conv.bias ? params["c.bias"].grad.to_host() : Floats(),
               want_dx ? dx.to_host() : Floats()};
    if (i > 0) {
      CHECK(now.output == r.output);
      CHECK(now.weight_grad == r.weight_grad);
      CHECK(now.bias_grad == r.bias_grad);
      CHECK(now.input_grad == r.input_grad);
    }
    r = now;
  }
  return r;
}

Result run_separately(const Case& c, registry::OpFactory& factory, const Tensor& x, const Tensor& dy, bool want_dx) {
  testing::TestParameters params;
  layers::LayerContext ctx;
  ctx.ops = &factory;
  ctx.precision = x.type();
  layers::Conv conv("c", c.conv);
  layers::Pool pool("p", c.pool);
  conv.setup({c.input}, ctx, params);
  const Shape mid = conv.output_shape({c.input});
  pool.setup({mid}, ctx, params);
  const Tensor y_conv(mid, x.type()), y(pool.output_shape({mid}), x.type()), dy_conv(mid, x.type());
  conv.forward({x}, y_conv, {});
  pool.forward({y_conv}, y, {});
  pool.backward({y_conv}, y, dy, {dy_conv}, {});
  const Tensor dx = want_dx ? Tensor(c.input, x.type()) : Tensor();
  conv.backward({x}, y_conv, dy_conv, {dx}, {});
  return {y.to_host(), params["c.weight"].grad.to_host(), c.conv.bias ? params["c.bias"].grad.to_host() : Floats(),
          want_dx ? dx.to_host() : Floats()};
}

}  // namespace

TEST_CASE("A fused convolution and max pool equals the two layers run separately", "[layers][conv][pool]") {
  for (const std::string& backend : registry::available_backends()) {
    registry::OpFactory factory(backend);
    for (const Case& c : cases()) {
      INFO(backend << ": " << c.what);
      const Tensor x(c.input);
      x.copy_from_host(random_vector<float>(static_cast<size_t>(c.input.numel()), 7));
      layers::Conv probe("c", c.conv);
      const Shape out = layers::Pool("p", c.pool).output_shape({probe.output_shape({c.input})});
      const Tensor dy(out);
      dy.copy_from_host(random_vector<float>(static_cast<size_t>(out.numel()), 8));

      for (const bool want_dx : {false, true}) {
        INFO((want_dx ? "with" : "without") << " the input gradient");
        const Result fused = run_fused(c, factory, x, dy, want_dx, 2);
        const Result separate = run_separately(c, factory, x, dy, want_dx);
        REQUIRE(fused.output.size() == separate.output.size());
        REQUIRE(fused.input_grad.size() == separate.input_grad.size());
        // The same convolution per output element: only the gradients' sums (over slabs, then
        // added; overlapping input rows of neighbouring slabs) run in another order.
        CHECK(max_rel_error(fused.output, separate.output, 1e-3) < 1e-5);
        CHECK(max_rel_error(fused.weight_grad, separate.weight_grad, 1e-2) < 1e-4);
        CHECK(max_rel_error(fused.bias_grad, separate.bias_grad, 1e-2) < 1e-4);
        CHECK(max_rel_error(fused.input_grad, separate.input_grad, 1e-2) < 1e-4);
      }
    }
  }
}

namespace {

/// The fused layer in bf16 against the two layers run separately in bf16, on `backend`.
/// `output_tolerance`: how far (relative) a fused output may lie from the separate one; zero
/// where the backend computes each output element the same way in a slab as in the whole.
void check_fused_bf16(const std::string& backend, double output_tolerance) {
  registry::OpFactory factory(backend);
  for (const Case& c : cases()) {
    INFO(c.what);
    Tensor x(c.input, ElementType::bf16);
    x.copy_from_host(random_vector<float>(static_cast<size_t>(c.input.numel()), 7));
    layers::Conv probe("c", c.conv);
    const Shape out = layers::Pool("p", c.pool).output_shape({probe.output_shape({c.input})});
    Tensor dy(out, ElementType::bf16);
    dy.copy_from_host(random_vector<float>(static_cast<size_t>(out.numel()), 8));
    for (const bool want_dx : {false, true}) {
      INFO((want_dx ? "with" : "without") << " the input gradient");
      const Result fused = run_fused(c, factory, x, dy, want_dx, 2);
      const Result separate = run_separately(c, factory, x, dy, want_dx);
      // The same bf16 convolution per output element, so the same maxima; the weight gradients
      // are fp32 sums over slabs. The input gradient of rows two slabs share is the bf16 sum of
      // two parts each rounded to bf16, where the separate layers round once: each element is
      // within u·(|part 1| + |part 2|) (u = 2^-8), which where the parts nearly cancel is large
      // beside the element itself, as for any sum of bf16 gradients (a tensor read by two
      // layers, in PyTorch's autocast too). Normwise that is a few u.
      CHECK(max_rel_error(fused.output, separate.output, 1e-3) <= output_tolerance);
      CHECK(max_rel_error(fused.weight_grad, separate.weight_grad, 1e-2) < 1e-4);
      CHECK(max_rel_error(fused.bias_grad, separate.bias_grad, 1e-2) < 1e-4);
      CHECK(norm_error(fused.input_grad, separate.input_grad) < 2 * 0x1p-8);
    }
  }
}

}  // namespace

TEST_CASE("In bf16 on the Kokkos backend, a fused convolution and max pool equals the two layers run separately",
          "[layers][conv][pool][precision]") {
  // The Kokkos gemm may sum a slab's products in another order than the whole's, and the fp32
  // sums then round to neighbouring bf16 values: one unit in the last place (2^-8 relative).
  check_fused_bf16("kokkos", 0x1p-8);
}

TEST_CASE("In bf16 on oneDNN, a fused convolution and max pool equals the two layers run separately",
          "[layers][conv][pool][precision]") {
  const auto& compiled = registry::available_backends();
  if (std::find(compiled.begin(), compiled.end(), "onednn") == compiled.end())
    TESSERA_SKIP("bf16-cpu", "bf16 convolutions run on oneDNN, which this build lacks");
  ops::ConvGeometry probe_g;  // the first case's convolution
  probe_g.batch = 2;
  probe_g.in_channels = 3;
  probe_g.out_channels = 4;
  probe_g.in_size = {7, 6, 5};
  probe_g.kernel = {3, 3, 3};
  probe_g.padding = {1, 1, 1};
  probe_g.type = ElementType::bf16;
  std::string why;
  if (!registry::backend("onednn").make_conv(probe_g, &why)) TESSERA_SKIP("bf16-cpu", "no bf16 convolution here: " + why);
  check_fused_bf16("onednn", 0.0);
}

TEST_CASE("Only non-overlapping max pools without padding fuse", "[layers][conv][pool]") {
  CHECK(ConvMaxPool::can_fuse(max_pool({2, 2, 2}), 3));
  CHECK(ConvMaxPool::can_fuse(max_pool({1, 2, 2}, 2), 2));
  CHECK_FALSE(ConvMaxPool::can_fuse(max_pool({1, 2, 2}, 2), 3));
  PoolOptions overlapping = max_pool({3, 3, 3});
  overlapping.stride = {2, 2, 2};
  CHECK_FALSE(ConvMaxPool::can_fuse(overlapping, 3));
  PoolOptions padded = max_pool({2, 2, 2});
  padded.padding = {1, 1, 1};
  CHECK_FALSE(ConvMaxPool::can_fuse(padded, 3));
  PoolOptions average = max_pool({2, 2, 2});
  average.kind = ops::PoolKind::average;
  CHECK_FALSE(ConvMaxPool::can_fuse(average, 3));
  CHECK_FALSE(ConvMaxPool::can_fuse(max_pool({8, 8, 4}), 3));  // 256 window positions

  const Shape in{1, 4, 4, 4, 2};
  registry::OpFactory factory("kokkos");
  testing::TestParameters params;
  layers::LayerContext ctx;
  ctx.ops = &factory;
  auto conv = std::make_unique<layers::Conv>("c", conv3d(2, 1, 1));
  ConvMaxPool fused(std::move(conv), "p", max_pool({2, 2, 2}));
  fused.setup({in}, ctx, params);
  CHECK(fused.name() == "c+p");
  CHECK(fused.type() == "conv3d+max_pool3d");
}
