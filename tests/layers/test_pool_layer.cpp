// The Pool layer through the layer API in float32: input gradients against finite differences
// (tie-free inputs for max pooling), configuration keys and shape errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/layer_harness.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/pool.hpp"

namespace {

using tessera::Shape;
using tessera::Tensor;
using tessera::layers::Pool;
using tessera::layers::PoolOptions;
using tessera::ops::PoolKind;
using tessera::testing::LayerHarness;
using tessera::testing::random_vector;
using Floats = std::vector<float>;

/// Distinct values 0.01 apart in random order: no window has a tie, and a step of 0.002 never
/// changes which element is a window's maximum.
Floats tie_free(size_t n, unsigned seed) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const Floats keys = random_vector<float>(n, seed);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  Floats v(n);
  for (size_t i = 0; i < n; ++i) v[order[i]] = 0.01f * static_cast<float>(i) - 0.005f * static_cast<float>(n);
  return v;
}

PoolOptions options(PoolKind kind, int rank, int64_t k, int64_t s, int64_t p) {
  PoolOptions o;
  o.kind = kind;
  o.spatial_rank = rank;
  const bool is_2d = rank == 2;
  o.kernel = {is_2d ? 1 : k, k, k};
  o.stride = {is_2d ? 1 : s, s, s};
  o.padding = {is_2d ? 0 : p, p, p};
  return o;
}

double check_case(const PoolOptions& o, const Shape& in, unsigned seed) {
  LayerHarness h(std::make_unique<Pool>("p", o), {in});
  INFO(h.layer().type() << " input " << in.str() << " output " << h.output().shape().str());
  // Average pooling is linear, so any input and a larger step do; max pooling needs tie-free
  // inputs and a step below half their spacing.
  const bool is_max = o.kind == PoolKind::max;
  const auto n = static_cast<size_t>(in.numel());
  h.input(0).copy_from_host(is_max ? tie_free(n, seed) : random_vector<float>(n, seed));
  const double step = is_max ? 2e-3 : 5e-2;
  const auto report = h.check_gradients({}, step, 1e-2, 1, seed + 1);
  INFO(report.worst);
  const double dx = report.rel_error.at("input 0");
  CHECK(dx < 2e-2);
  return dx;
}

std::unique_ptr<tessera::layers::Layer> from_json(const nlohmann::json& j, PoolKind kind, int rank) {
  tessera::ConfigObject cfg(j, "$.layers[0]");
  auto layer = kind == PoolKind::max ? Pool::from_json<PoolKind::max>("p", cfg, rank)
                                     : Pool::from_json<PoolKind::average>("p", cfg, rank);
  cfg.finish();
  return layer;
}

}  // namespace

TEST_CASE("pool layer: float32 input gradients match finite differences", "[pool][layers]") {
  for (const PoolKind kind : {PoolKind::max, PoolKind::average}) {
    double reached = 0.0;
    reached = std::max(reached, check_case(options(kind, 2, 2, 2, 0), Shape{2, 7, 6, 3}, 1));
    reached = std::max(reached, check_case(options(kind, 2, 3, 2, 1), Shape{2, 7, 5, 1}, 2));
    reached = std::max(reached, check_case(options(kind, 3, 2, 2, 0), Shape{2, 5, 7, 6, 2}, 3));
    reached = std::max(reached, check_case(options(kind, 3, 3, 1, 1), Shape{1, 5, 4, 3, 3}, 4));
    std::printf("[tolerance] %s pool layer float32: dx max_rel_err %.1e (asserted < 2e-2, floor 1e-2)\n",
                kind == PoolKind::max ? "max" : "avg", reached);
  }
}

TEST_CASE("pool layer: configuration keys", "[pool][layers]") {
  auto max3 = from_json(nlohmann::json::object(), PoolKind::max, 3);
  auto& p = dynamic_cast<Pool&>(*max3);
  CHECK(p.type() == "max_pool3d");
  CHECK(p.options().kernel == std::array<int64_t, 3>{2, 2, 2});
  CHECK(p.options().stride == std::array<int64_t, 3>{2, 2, 2});
  CHECK(p.options().padding == std::array<int64_t, 3>{0, 0, 0});
  CHECK(p.output_shape({Shape{2, 8, 9, 7, 4}}) == Shape{2, 4, 4, 3, 4});

  // The stride defaults to the kernel, per axis.
  auto avg2 = from_json({{"kernel", {3, 2}}}, PoolKind::average, 2);
  auto& a = dynamic_cast<Pool&>(*avg2);
  CHECK(a.type() == "avg_pool2d");
  CHECK(a.options().stride == std::array<int64_t, 3>{1, 3, 2});
  CHECK(a.output_shape({Shape{1, 9, 9, 2}}) == Shape{1, 3, 4, 2});

  auto strided = from_json({{"kernel", 3}, {"stride", 2}, {"padding", 1}}, PoolKind::max, 3);
  CHECK(strided->output_shape({Shape{1, 5, 6, 7, 1}}) == Shape{1, 3, 3, 4, 1});

  CHECK_THROWS_WITH(from_json({{"kernel", 2}, {"padding", 2}}, PoolKind::max, 3), Catch::Contains("padding"));
  CHECK_THROWS_WITH(from_json({{"kernel", 0}}, PoolKind::max, 3), Catch::Contains("kernel"));
  CHECK_THROWS_WITH(from_json({{"size", 2}}, PoolKind::average, 3), Catch::Contains("size"));
}

TEST_CASE("pool layer: shape errors name the layer and the shape", "[pool][layers]") {
  Pool p3("down", options(PoolKind::max, 3, 2, 2, 0));
  CHECK_THROWS_AS(p3.output_shape({Shape{2, 8, 8, 3}}), tessera::ShapeError);
  CHECK_THROWS_WITH(p3.output_shape({Shape{2, 8, 8, 3}}),
                    Catch::Contains("layer 'down' (max_pool3d)") && Catch::Contains("[2, 8, 8, 3]"));
  Pool p2("avg", options(PoolKind::average, 2, 3, 3, 0));
  CHECK_THROWS_WITH(p2.output_shape({Shape{2, 4, 8, 8, 3}}), Catch::Contains("layer 'avg' (avg_pool2d)"));
  // Kernel larger than the input.
  CHECK_THROWS_AS(p2.output_shape({Shape{2, 2, 8, 3}}), tessera::ShapeError);
  CHECK_THROWS_WITH(p2.output_shape({Shape{2, 2, 8, 3}}), Catch::Contains("layer 'avg'") && Catch::Contains("height"));
}

TEST_CASE("pool layer: a batch size that changes", "[pool][layers]") {
  LayerHarness f(std::make_unique<Pool>("p", options(PoolKind::max, 3, 2, 2, 0)), {Shape{2, 4, 4, 4, 2}});
  CHECK(f.layer().backend() == "kokkos");
  const Shape one{1, 4, 4, 4, 2};
  f.layer().reshape({one});
  const Floats x = tie_free(static_cast<size_t>(one.numel()), 5);
  Tensor xt(one), yt(f.layer().output_shape({one})), dy(yt.shape()), dx(one);
  xt.copy_from_host(x);
  f.layer().forward({xt}, yt, {});
  dy.fill(1.0f);
  f.layer().backward({xt}, yt, dy, {dx}, {});
  const Floats g = dx.to_host();
  // Each of the 8·2 windows passes its gradient to exactly one input.
  CHECK(std::accumulate(g.begin(), g.end(), 0.0) == Approx(16.0));
  CHECK(std::count(g.begin(), g.end(), 1.0f) == 16);
}
