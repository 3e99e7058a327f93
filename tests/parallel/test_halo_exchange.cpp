#include <catch2/catch.hpp>

#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/parallel/halo_exchange.hpp"

using namespace tessera;
using parallel::HaloWidths;

namespace {

std::vector<float> counting(int64_t n, float first) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + static_cast<float>(i);
  return v;
}

/// `block` [N, D, H, W, C] surrounded by `halo` filled with `boundary`.
std::vector<float> padded_reference(const std::vector<float>& block, const std::array<int64_t, 5>& e,
                                    const HaloWidths& halo, float boundary) {
  const std::array<int64_t, 5> p{e[0], e[1] + halo.before[0] + halo.after[0], e[2] + halo.before[1] + halo.after[1],
                                 e[3] + halo.before[2] + halo.after[2], e[4]};
  std::vector<float> out(static_cast<size_t>(p[0] * p[1] * p[2] * p[3] * p[4]), boundary);
  for (int64_t n = 0; n < e[0]; ++n)
    for (int64_t d = 0; d < e[1]; ++d)
      for (int64_t h = 0; h < e[2]; ++h)
        for (int64_t w = 0; w < e[3]; ++w)
          for (int64_t c = 0; c < e[4]; ++c) {
            const int64_t pd = d + halo.before[0], ph = h + halo.before[1], pw = w + halo.before[2];
            out[static_cast<size_t>((((n * p[1] + pd) * p[2] + ph) * p[3] + pw) * p[4] + c)] =
                block[static_cast<size_t>((((n * e[1] + d) * e[2] + h) * e[3] + w) * e[4] + c)];
          }
  return out;
}

/// The interior of a padded gradient: what backward leaves when no neighbour exists.
std::vector<float> interior_reference(const std::vector<float>& padded, const std::array<int64_t, 5>& e,
                                      const HaloWidths& halo) {
  const std::array<int64_t, 5> p{e[0], e[1] + halo.before[0] + halo.after[0], e[2] + halo.before[1] + halo.after[1],
                                 e[3] + halo.before[2] + halo.after[2], e[4]};
  std::vector<float> out;
  for (int64_t n = 0; n < e[0]; ++n)
    for (int64_t d = 0; d < e[1]; ++d)
      for (int64_t h = 0; h < e[2]; ++h)
        for (int64_t w = 0; w < e[3]; ++w)
          for (int64_t c = 0; c < e[4]; ++c)
            out.push_back(padded[static_cast<size_t>(
                (((n * p[1] + d + halo.before[0]) * p[2] + h + halo.before[1]) * p[3] + w + halo.before[2]) * p[4] +
                c)]);
  return out;
}

}  // namespace

TEST_CASE("HaloWidths reports whether any halo exists", "[parallel][halo]") {
  HaloWidths none;
  CHECK_FALSE(none.any());
  HaloWidths one;
  one.after[2] = 1;
  CHECK(one.any());
  CHECK(one.str() == "depth 0+0, height 0+0, width 0+1");
}

TEST_CASE("On one rank every halo is global boundary: forward pads, backward takes the interior", "[parallel][halo]") {
  const parallel::ProcessGrid grid;
  const float boundary = GENERATE(0.0f, std::numeric_limits<float>::lowest());
  HaloWidths halo;
  halo.before = {1, 2, 0};
  halo.after = {1, 0, 1};
  const Shape local{2, 3, 4, 2, 3};
  parallel::HaloExchange exchange(grid, local, halo, "layers[0]");
  CHECK(exchange.local_shape() == local);
  REQUIRE(exchange.padded_shape() == Shape{2, 5, 6, 3, 3});

  Tensor x(local), padded(exchange.padded_shape());
  const auto xv = counting(local.numel(), 1.0f);
  x.copy_from_host(xv);
  padded.fill(99.0f);  // every element must be written
  exchange.start_forward(x, padded, boundary);
  exchange.finish_forward();
  CHECK(padded.to_host() == padded_reference(xv, {2, 3, 4, 2, 3}, halo, boundary));

  // Repeated use reuses the exchange.
  const auto xv2 = counting(local.numel(), -50.0f);
  x.copy_from_host(xv2);
  exchange.start_forward(x, padded, boundary);
  exchange.finish_forward();
  CHECK(padded.to_host() == padded_reference(xv2, {2, 3, 4, 2, 3}, halo, boundary));

  Tensor grad_padded(exchange.padded_shape()), grad_local(local);
  const auto gv = counting(grad_padded.numel(), 3.0f);
  grad_padded.copy_from_host(gv);
  grad_local.fill(99.0f);
  exchange.start_backward(grad_padded, grad_local);
  exchange.finish_backward();
  CHECK(grad_local.to_host() == interior_reference(gv, {2, 3, 4, 2, 3}, halo));
  CHECK(exchange.bytes_sent() == 0);
  CHECK(exchange.account().blocked >= 0.0);
}

TEST_CASE("A 2D halo exchange pads height and width only", "[parallel][halo]") {
  const parallel::ProcessGrid grid;
  HaloWidths halo;
  halo.before = {0, 1, 2};
  halo.after = {0, 1, 0};
  parallel::HaloExchange exchange(grid, Shape{2, 3, 4, 2}, halo, "pool");
  REQUIRE(exchange.padded_shape() == Shape{2, 5, 6, 2});
  Tensor x(Shape{2, 3, 4, 2}), padded(exchange.padded_shape());
  const auto xv = counting(x.numel(), 1.0f);
  x.copy_from_host(xv);
  exchange.start_forward(x, padded, -1.0f);
  exchange.finish_forward();
  CHECK(padded.to_host() == padded_reference(xv, {2, 1, 3, 4, 2}, halo, -1.0f));

  HaloWidths depth;
  depth.before[0] = 1;
  CHECK_THROWS_WITH(parallel::HaloExchange(grid, Shape{2, 3, 4, 2}, depth, "pool"),
                    Catch::Contains("pool") && Catch::Contains("2D block [2, 3, 4, 2]"));
}

TEST_CASE("Without a neighbour a halo may be wider than the block", "[parallel][halo]") {
  HaloWidths halo;
  halo.before = {3, 0, 0};
  halo.after = {0, 0, 4};
  parallel::HaloExchange exchange(parallel::ProcessGrid(), Shape{1, 2, 2, 2, 1}, halo, "conv");
  CHECK(exchange.padded_shape() == Shape{1, 5, 2, 6, 1});
}

TEST_CASE("HaloExchange refuses wrong shapes and calls out of order, naming the layer", "[parallel][halo]") {
  HaloWidths halo;
  halo.before = {1, 1, 1};
  halo.after = {1, 1, 1};
  parallel::HaloExchange exchange(parallel::ProcessGrid(), Shape{1, 2, 2, 2, 1}, halo, "layers[3] (conv3d)");
  Tensor x(Shape{1, 2, 2, 2, 1}), padded(exchange.padded_shape()), wrong(Shape{1, 2, 2, 3, 1});
  CHECK_THROWS_WITH(exchange.start_forward(wrong, padded, 0.0f),
                    Catch::Contains("layers[3] (conv3d)") && Catch::Contains("[1, 2, 2, 3, 1]"));
  CHECK_THROWS_AS(exchange.start_forward(x, x, 0.0f), ShapeError);
  CHECK_THROWS_WITH(exchange.finish_forward(), Catch::Contains("no exchange was started"));
  exchange.start_forward(x, padded, 0.0f);
  CHECK_THROWS_WITH(exchange.start_backward(padded, x), Catch::Contains("forward exchange is in flight"));
  exchange.finish_forward();
  CHECK_THROWS_AS(exchange.finish_backward(), Error);
  CHECK_THROWS_AS(parallel::HaloExchange(parallel::ProcessGrid(), Shape{2, 8}, halo, "dense"), ShapeError);
  HaloWidths negative;
  negative.after[1] = -1;
  CHECK_THROWS_WITH(parallel::HaloExchange(parallel::ProcessGrid(), Shape{1, 2, 2, 2, 1}, negative, "conv"),
                    Catch::Contains("negative height halo"));
}

TEST_CASE("A HaloExchange can be replaced by assignment", "[parallel][halo]") {
  parallel::HaloExchange exchange;
  CHECK(exchange.local_shape() == Shape{});
  HaloWidths halo;
  halo.after = {0, 1, 1};
  exchange = parallel::HaloExchange(parallel::ProcessGrid(), Shape{1, 2, 2, 1}, halo, "conv");
  CHECK(exchange.padded_shape() == Shape{1, 3, 3, 1});
  Tensor x(Shape{1, 2, 2, 1}), padded(exchange.padded_shape());
  x.copy_from_host({1, 2, 3, 4});
  exchange.start_forward(x, padded, 0.0f);
  exchange.finish_forward();
  CHECK(padded.to_host() == std::vector<float>{1, 2, 0, 3, 4, 0, 0, 0, 0});
}
