#include <catch2/catch.hpp>

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/io/synthetic_fields.hpp"

using namespace tessera;

namespace {
io::SyntheticFields make(int64_t samples, int64_t size, uint64_t seed) {
  io::SyntheticFields::Options o;
  o.samples = samples;
  o.size = size;
  o.channels = 4;
  o.seed = seed;
  return io::SyntheticFields(o);
}

/// Mean and variance of channel c of one sample, and the mean squared difference between
/// neighbouring voxels along W (small for long correlation lengths).
struct Stats {
  double mean = 0, var = 0, roughness = 0;
};
Stats stats(const std::vector<float>& x, int64_t s, int64_t channels, int64_t c) {
  Stats st;
  const int64_t v = s * s * s;
  for (int64_t i = 0; i < v; ++i) st.mean += x[static_cast<size_t>(i * channels + c)];
  st.mean /= static_cast<double>(v);
  for (int64_t i = 0; i < v; ++i) {
    const double d = x[static_cast<size_t>(i * channels + c)] - st.mean;
    st.var += d * d;
    const int64_t next = (i % s == s - 1) ? i - (s - 1) : i + 1;
    const double g = x[static_cast<size_t>(next * channels + c)] - x[static_cast<size_t>(i * channels + c)];
    st.roughness += g * g;
  }
  st.var /= static_cast<double>(v);
  st.roughness /= static_cast<double>(v);
  return st;
}
}  // namespace

TEST_CASE("Synthetic fields are a pure function of seed and index", "[io][synthetic]") {
  auto a = make(8, 8, 3), b = make(8, 8, 3), c = make(8, 8, 4);
  Tensor xa(Shape{2, 8, 8, 8, 4}), ya(Shape{2, 4}), xb(Shape{2, 8, 8, 8, 4}), yb(Shape{2, 4});
  a.load({5, 1}, a.whole_box(), xa, ya);
  b.load({1, 5}, b.whole_box(), xb, yb);
  const auto ha = xa.to_host(), hb = xb.to_host();
  const size_t per = 8 * 8 * 8 * 4;
  CHECK(std::equal(ha.begin(), ha.begin() + per, hb.begin() + per));  // sample 5 in either row
  CHECK(ya.to_host()[0] == yb.to_host()[4]);
  c.load({5, 1}, c.whole_box(), xb, yb);
  CHECK(xb.to_host() != ha);
  CHECK_THROWS(a.load({8}, a.whole_box(), xa, ya));
}

TEST_CASE("Synthetic field statistics follow their parameters", "[io][synthetic]") {
  const int64_t s = 16;
  auto ds = make(64, s, 11);
  Tensor x(Shape{1, s, s, s, 4}), y(Shape{1, 4});
  int checked = 0;
  for (int64_t i = 0; i < 64; ++i) {
    const auto theta = ds.parameters(i);
    for (float t : theta) REQUIRE((t >= -1.0f && t <= 1.0f));
    ds.load({i}, ds.whole_box(), x, y);
    const auto h = x.to_host();
    const auto st0 = stats(h, s, 4, 0), st3 = stats(h, s, 4, 3);
    // Mean offset θ2 up to the sampling noise of a correlated field: the sample mean of
    // Gaussian-smoothed noise has variance amp²·(2√π·σ)³/volume; allow 4 standard errors.
    const double sigma = 1.0 + 0.5 * theta[1];
    const double std_error = std::exp(0.5 * theta[0]) * std::sqrt(std::pow(2.0 * std::sqrt(M_PI) * sigma, 3) / (s * s * s));
    CHECK(st0.mean == Approx(theta[2]).margin(4.0 * std_error));
    // Channel 3 over channel 0 has the growth ratio exp(0.4·θ3·3) in standard deviation.
    CHECK(std::sqrt(st3.var / st0.var) == Approx(std::exp(1.2 * theta[3])).epsilon(1e-3));
    ++checked;
  }
  CHECK(checked == 64);

  // Over many samples, a longer correlation length (θ1) means a smoother field at equal variance.
  double smooth = 0, rough = 0;
  int n_smooth = 0, n_rough = 0;
  for (int64_t i = 0; i < 64; ++i) {
    const auto theta = ds.parameters(i);
    ds.load({i}, ds.whole_box(), x, y);
    const auto st = stats(x.to_host(), s, 4, 0);
    const double r = st.roughness / st.var;
    if (theta[1] > 0.3) { smooth += r; ++n_smooth; }
    if (theta[1] < -0.3) { rough += r; ++n_rough; }
  }
  REQUIRE((n_smooth > 5 && n_rough > 5));
  CHECK(smooth / n_smooth < 0.5 * rough / n_rough);
}

TEST_CASE("Segmentation targets mark where the noiseless field is positive", "[io][synthetic]") {
  io::SyntheticFields::Options o;
  o.task = io::SyntheticFields::Task::segmentation;
  o.samples = 4;
  o.size = 12;
  o.channels = 2;
  o.seed = 5;
  io::SyntheticFields ds(o);
  CHECK(ds.target_shape() == Shape{12, 12, 12});
  Tensor x(Shape{2, 12, 12, 12, 2}), y(Shape{2, 12, 12, 12});
  ds.load({0, 3}, ds.whole_box(), x, y);
  const auto hx = x.to_host(), hy = y.to_host();
  // Labels are 0/1, both classes occur, and the mean input of the two channels agrees with
  // the label far more often than chance although each channel carries unit noise.
  double positive = 0, agree = 0;
  for (size_t v = 0; v < hy.size(); ++v) {
    REQUIRE((hy[v] == 0.0f || hy[v] == 1.0f));
    positive += hy[v];
    const float mean = 0.5f * (hx[2 * v] + hx[2 * v + 1]);
    agree += (mean > 0.0f) == (hy[v] == 1.0f);
  }
  const double n = static_cast<double>(hy.size());
  CHECK(positive / n > 0.2);
  CHECK(positive / n < 0.8);
  CHECK(agree / n > 0.6);
  CHECK(agree / n < 0.95);
}

TEST_CASE("The in-memory store returns exactly what regeneration returns", "[io][synthetic]") {
  for (auto task : {io::SyntheticFields::Task::regression, io::SyntheticFields::Task::segmentation}) {
    io::SyntheticFields::Options o;
    o.task = task;
    o.samples = 6;
    o.size = 8;
    o.seed = 13;
    o.store_mb = 0;
    io::SyntheticFields plain(o);
    o.store_mb = 64;
    io::SyntheticFields stored(o);
    const Shape xs{3, 8, 8, 8, 4};
    std::vector<int64_t> ts{3};
    for (auto d : plain.target_shape().dims()) ts.push_back(d);
    Tensor xa(xs), ya{Shape(ts)}, xb(xs), yb{Shape(ts)};
    plain.load({4, 0, 4}, plain.whole_box(), xa, ya);
    stored.load({4, 0, 2}, stored.whole_box(), xb, yb);  // fills the store for 4, 0, 2
    stored.load({4, 0, 4}, stored.whole_box(), xb, yb);  // served from the store
    CHECK(xa.to_host() == xb.to_host());
    CHECK(ya.to_host() == yb.to_host());
  }
}

TEST_CASE("Loading a box of each sample equals cutting it from the whole sample", "[io][synthetic]") {
  for (auto task : {io::SyntheticFields::Task::regression, io::SyntheticFields::Task::segmentation}) {
    for (const int64_t store_mb : {int64_t{0}, int64_t{16}}) {
      io::SyntheticFields::Options o;
      o.task = task;
      o.samples = 5;
      o.size = 6;
      o.channels = 3;
      o.seed = 2;
      o.store_mb = store_mb;
      io::SyntheticFields ds(o);
      const bool voxel = task == io::SyntheticFields::Task::segmentation;
      CHECK(ds.targets_per_voxel() == voxel);
      Tensor x(Shape{2, 6, 6, 6, 3}), y(Shape{2, voxel ? 216 : 4});
      ds.load({4, 1}, ds.whole_box(), x, y);
      const auto hx = x.to_host(), hy = y.to_host();
      const parallel::Box box{{2, 0, 3}, {4, 3, 3}};
      Tensor bx(Shape{2, 4, 3, 3, 3}), by(Shape{2, voxel ? 36 : 4});
      ds.load({4, 1}, box, bx, by);
      std::vector<float> want_x, want_y;
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t d = 2; d < 6; ++d)
          for (int64_t h = 0; h < 3; ++h)
            for (int64_t w = 3; w < 6; ++w) {
              const int64_t v = r * 216 + (d * 6 + h) * 6 + w;
              for (int64_t c = 0; c < 3; ++c) want_x.push_back(hx[static_cast<size_t>(v * 3 + c)]);
              if (voxel) want_y.push_back(hy[static_cast<size_t>(v)]);
            }
      if (!voxel) want_y = hy;  // per-sample targets are not cut
      CHECK(bx.to_host() == want_x);
      CHECK(by.to_host() == want_y);
      CHECK_THROWS_AS(ds.load({0}, parallel::Box{{3, 0, 0}, {4, 6, 6}}, bx, by), ShapeError);
    }
  }
}
