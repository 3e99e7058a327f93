// The BCPNN layer: its kernels against hand values, its traces, weights and biases against a
// double-precision implementation of the rule written out here, its keys, and a tiny layer
// that separates two clusters without labels.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

#include "support/layer_harness.hpp"
#include "tessera/backends/kokkos/bcpnn_kernels.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/half_float.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/layers/bcpnn.hpp"

using namespace tessera;
using layers::Bcpnn;
using layers::BcpnnOptions;
using testing::LayerHarness;

namespace {

layers::StepInfo learning_step(int64_t step, int64_t batch) {
  layers::StepInfo info{layers::Mode::training, step, batch};
  info.local_learning = true;
  return info;
}

/// The rule in double for one layer of H hypercolumns of M units over complementary pairs of
/// F inputs, every hypercolumn connected, no bias regulation: the traces, then the weights
/// and biases, then the output of a batch.
struct ReferenceBcpnn {
  int64_t features, h, m;
  double rate, eps;
  std::vector<double> p_i, p_j, p_ij;  // p_ij [units, inputs]

  int64_t inputs() const { return 2 * features; }
  int64_t units() const { return h * m; }
  double weight(int64_t j, int64_t i) const {
    return std::log((p_ij[static_cast<size_t>(j * inputs() + i)] + eps * eps) /
                    ((p_i[static_cast<size_t>(i)] + eps) * (p_j[static_cast<size_t>(j)] + eps)));
  }
  double bias(int64_t j) const { return std::log(p_j[static_cast<size_t>(j)] + eps); }
  std::vector<double> encode(const std::vector<float>& x, int64_t row) const {
    std::vector<double> u;
    for (int64_t f = 0; f < features; ++f) {
      const double v = x[static_cast<size_t>(row * features + f)];
      u.push_back(v);
      u.push_back(1.0 - v);
    }
    return u;
  }
  std::vector<double> output(const std::vector<float>& x, int64_t row) const {
    const std::vector<double> u = encode(x, row);
    std::vector<double> y(static_cast<size_t>(units()));
    for (int64_t c = 0; c < h; ++c) {
      double total = 0.0;
      for (int64_t k = 0; k < m; ++k) {
        const int64_t j = c * m + k;
        double s = bias(j);
        for (int64_t i = 0; i < inputs(); ++i) s += weight(j, i) * u[static_cast<size_t>(i)];
        y[static_cast<size_t>(j)] = std::exp(s);
        total += y[static_cast<size_t>(j)];
      }
      for (int64_t k = 0; k < m; ++k) y[static_cast<size_t>(c * m + k)] /= total;
    }
    return y;
  }
  void learn(const std::vector<float>& x, int64_t rows) {
    std::vector<double> si(p_i.size(), 0.0), sj(p_j.size(), 0.0), sij(p_ij.size(), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const auto u = encode(x, r);
      const auto y = output(x, r);
      for (int64_t i = 0; i < inputs(); ++i) si[static_cast<size_t>(i)] += u[static_cast<size_t>(i)];
      for (int64_t j = 0; j < units(); ++j) {
        sj[static_cast<size_t>(j)] += y[static_cast<size_t>(j)];
        for (int64_t i = 0; i < inputs(); ++i)
          sij[static_cast<size_t>(j * inputs() + i)] += y[static_cast<size_t>(j)] * u[static_cast<size_t>(i)];
      }
    }
    const auto move = [&](std::vector<double>& p, const std::vector<double>& s) {
      for (size_t k = 0; k < p.size(); ++k) p[k] = (1.0 - rate) * p[k] + rate * s[k] / static_cast<double>(rows);
    };
    move(p_i, si);
    move(p_j, sj);
    move(p_ij, sij);
  }
};

/// Differences relative to the wanted value, or absolute below `floor` (a log near 0 carries
/// the rounding of its argument as an absolute error).
double max_relative_difference(const std::vector<float>& got, const std::vector<double>& want, double floor = 1e-3) {
  double worst = 0.0;
  for (size_t k = 0; k < want.size(); ++k)
    worst = std::max(worst, std::abs(got[k] - want[k]) / std::max(std::abs(want[k]), floor));
  return worst;
}

}  // namespace

TEST_CASE("bcpnn kernels: complementary pairs, the softmax in each hypercolumn, column sums", "[bcpnn][layer]") {
  Tensor x(Shape{2, 2});
  x.copy_from_host({0.0f, 0.25f, 1.0f, 0.5f});
  Tensor pairs(Shape{2, 4});
  kokkos_backend::complementary_encode(x, pairs);
  CHECK(pairs.to_host() == std::vector<float>{0.0f, 1.0f, 0.25f, 0.75f, 1.0f, 0.0f, 0.5f, 0.5f});

  Tensor s(Shape{1, 4});
  s.copy_from_host({0.0f, std::log(3.0f), 1000.0f, 1000.0f});  // large supports: no overflow
  kokkos_backend::hypercolumn_softmax(s, 2, s);
  const auto y = s.to_host();
  CHECK(y[0] == Approx(0.25f));
  CHECK(y[1] == Approx(0.75f));
  CHECK(y[2] == Approx(0.5f));
  CHECK(y[3] == Approx(0.5f));
  CHECK_THROWS_AS(kokkos_backend::hypercolumn_softmax(s, 3, s), ShapeError);

  Tensor sums(Shape{4});
  kokkos_backend::column_sums(pairs, sums);
  CHECK(sums.to_host() == std::vector<float>{1.0f, 1.0f, 0.75f, 1.25f});
}

TEST_CASE("bcpnn kernels: weights, biases and mutual information from traces by hand", "[bcpnn][layer]") {
  // Two input units (one hypercolumn of 2), two output hypercolumns of one unit each.
  Tensor p_i(Shape{2}), p_j(Shape{2}), p_ij(Shape{2, 2}), mask(Shape{2, 1}), w(Shape{2, 2});
  p_i.copy_from_host({0.5f, 0.5f});
  p_j.copy_from_host({0.25f, 1.0f});
  p_ij.copy_from_host({0.2f, 0.05f, 0.5f, 0.5f});
  mask.copy_from_host({1.0f, 0.0f});
  kokkos_backend::BcpnnTraceSettings s;
  s.input_minicolumns = 2;
  s.output_minicolumns = 1;
  s.eps = 1e-6f;
  kokkos_backend::bcpnn_weights(p_i, p_j, p_ij, mask, s, w);
  const auto wv = w.to_host();
  CHECK(wv[0] == Approx(std::log(0.2 / 0.125)).epsilon(1e-4));
  CHECK(wv[1] == Approx(std::log(0.05 / 0.125)).epsilon(1e-4));
  CHECK(wv[2] == 0.0f);  // hypercolumn 1 does not read input hypercolumn 0
  CHECK(wv[3] == 0.0f);

  Tensor k_beta(Shape{2}), b(Shape{2});
  k_beta.fill(1.0f);
  kokkos_backend::bcpnn_bias(p_j, {}, s, k_beta, b);
  CHECK(b.to_host()[0] == Approx(std::log(0.25)).epsilon(1e-4));
  // Regulated: a unit below p_min/4 moves its gain towards k_half, one far above towards 1.
  kokkos_backend::BiasRegulation r{-10.0f, 0.4f, 0.5f};
  kokkos_backend::bcpnn_bias(p_j, r, s, k_beta, b);
  const double k = (-10.0 - 1.0) * 0.01;
  const double target1 = 1.0 + k / ((1.0 - 0.1) * (1.0 - 0.1));
  CHECK(k_beta.to_host()[0] == Approx(0.5 + 0.5 * (1.0 + k / (0.15 * 0.15))).epsilon(1e-4));
  CHECK(k_beta.to_host()[1] == Approx(0.5 + 0.5 * target1).epsilon(1e-4));
  CHECK(b.to_host()[1] == Approx(k_beta.to_host()[1] * std::log(1.0 + 1e-6)).margin(1e-6));

  Tensor mi(Shape{2, 1});
  kokkos_backend::hypercolumn_mutual_information(p_i, p_j, p_ij, s, mi);
  const double mi0 = 0.2 * std::log(0.2 / 0.125) + 0.05 * std::log(0.05 / 0.125);
  CHECK(mi.to_host()[0] == Approx(mi0).epsilon(1e-3));
  CHECK(mi.to_host()[1] == Approx(0.0).margin(1e-5));  // p_ij = p_i p_j: independent
}

TEST_CASE("bcpnn layer: traces, weights and biases follow the rule over learning steps", "[bcpnn][layer]") {
  BcpnnOptions o;
  o.hypercolumns = 2;
  o.minicolumns = 3;
  o.trace_rate = 0.3f;
  o.eps = 1e-5f;
  o.init_noise = 0.2f;
  const int64_t features = 4, rows = 5;
  LayerHarness h(std::make_unique<Bcpnn>("b", o), {Shape{rows, 2, 2, 1}});
  CHECK(h.layer().output_shape({Shape{rows, 2, 2, 1}}) == Shape{rows, 6});
  CHECK(h.params().at("b.p_ij").shape == Shape{6, 8});
  CHECK(h.params().at("b.mask").shape == Shape{2, 4});
  for (const char* buffer : {"b.p_i", "b.p_j", "b.p_ij", "b.mask", "b.k_beta", "b.weight", "b.bias"}) {
    INFO(buffer);
    CHECK_FALSE(h.params().at(buffer).trainable);
    CHECK(h.params().at(buffer).synchronized);
  }
  ReferenceBcpnn ref{features, 2, 3, 0.3, 1e-5, {}, {}, {}};
  for (float v : h.params().at("b.p_i").value.to_host()) ref.p_i.push_back(v);
  for (float v : h.params().at("b.p_j").value.to_host()) ref.p_j.push_back(v);
  for (float v : h.params().at("b.p_ij").value.to_host()) ref.p_ij.push_back(v);
  CHECK(ref.p_i[0] == 0.5);
  CHECK(ref.p_j[0] == Approx(1.0 / 3.0));
  // The joint trace starts jittered around independence, within ±init_noise.
  double spread = 0.0;
  for (size_t k = 0; k < ref.p_ij.size(); ++k) spread = std::max(spread, std::abs(ref.p_ij[k] / (0.5 / 3.0) - 1.0));
  CHECK(spread > 0.05);
  CHECK(spread <= 0.2 + 1e-6);

  for (int64_t step = 0; step < 3; ++step) {
    std::vector<float> x(static_cast<size_t>(rows * features));
    for (size_t k = 0; k < x.size(); ++k) x[k] = rng::uniform(7, static_cast<uint64_t>(step), k);
    h.input(0).copy_from_host(x);
    const std::vector<double> want_y = ref.output(x, 2);
    const auto y = h.forward(learning_step(step, rows));
    ref.learn(x, rows);
    const std::vector<float> y_row(y.begin() + 2 * 6, y.begin() + 3 * 6);
    CHECK(max_relative_difference(y_row, want_y) < 1e-4);
  }
  const double traces = std::max({max_relative_difference(h.params().at("b.p_i").value.to_host(), ref.p_i),
                                  max_relative_difference(h.params().at("b.p_j").value.to_host(), ref.p_j),
                                  max_relative_difference(h.params().at("b.p_ij").value.to_host(), ref.p_ij)});
  std::vector<double> want_w, want_b;
  for (int64_t j = 0; j < 6; ++j) {
    want_b.push_back(ref.bias(j));
    for (int64_t i = 0; i < 8; ++i) want_w.push_back(ref.weight(j, i));
  }
  const double derived = std::max(max_relative_difference(h.params().at("b.weight").value.to_host(), want_w, 1.0),
                                  max_relative_difference(h.params().at("b.bias").value.to_host(), want_b, 1.0));
  std::printf("[tolerance] bcpnn layer against the rule in double after 3 steps: traces %.2g, weights %.2g\n", traces,
              derived);
  CHECK(traces < 1e-5);
  CHECK(derived < 1e-5);

  // Inference, and training outside local-learning steps, leave the traces alone.
  const auto before = h.params().at("b.p_ij").value.to_host();
  h.forward(layers::StepInfo{layers::Mode::inference, 3, rows});
  h.forward(layers::StepInfo{layers::Mode::training, 4, rows});
  CHECK(h.params().at("b.p_ij").value.to_host() == before);
  // No gradient flows through the local rule.
  const auto grads = h.backward(std::vector<float>(static_cast<size_t>(rows * 6), 1.0f));
  for (float g : grads[0]) CHECK(g == 0.0f);
}

TEST_CASE("bcpnn layer: keys, defaults and what it refuses", "[bcpnn][layer]") {
  nlohmann::json json = {{"hypercolumns", 3}, {"minicolumns", 4}, {"density", 0.5}, {"rewire_every", 10},
                         {"bias_regulation", {{"k_half", -100}, {"p_min", 0.1}, {"rate", 0.001}}}};
  ConfigObject cfg(json, "$.model.layers[0]");
  auto layer = Bcpnn::from_json("b", cfg, 2);
  cfg.finish();
  const auto& b = dynamic_cast<const Bcpnn&>(*layer);
  CHECK(b.type() == "bcpnn");
  CHECK(b.traits().learns_locally);
  CHECK(b.options().complementary);
  CHECK(b.options().input_minicolumns == 2);
  CHECK(b.options().rewire_swaps == 16);
  CHECK(b.options().bias_regulation.k_half == -100.0f);

  const auto refused = [](nlohmann::json j) {
    ConfigObject c(j, "$.model.layers[0]");
    auto made = Bcpnn::from_json("b", c, 2);
    c.finish();
  };
  CHECK_THROWS_WITH(refused({{"hypercolumns", 3}}), Catch::Contains("$.model.layers[0].minicolumns"));
  CHECK_THROWS_WITH(refused({{"hypercolumns", 3}, {"minicolumns", 2}, {"rewire_every", 5}}),
                    Catch::Contains("rewire_every") && Catch::Contains("density"));
  CHECK_THROWS_WITH(refused({{"hypercolumns", 3}, {"minicolumns", 2}, {"input_minicolumns", 5}}),
                    Catch::Contains("input_minicolumns") && Catch::Contains("complementary"));
  CHECK_THROWS_WITH(refused({{"hypercolumns", 3}, {"minicolumns", 2}, {"encoding", "onehot"}}),
                    Catch::Contains("$.model.layers[0].encoding"));
  CHECK_THROWS_WITH(refused({{"hypercolumns", 3}, {"minicolumns", 2}, {"density", 0}}),
                    Catch::Contains("$.model.layers[0].density"));

  BcpnnOptions plain;
  plain.complementary = false;
  plain.input_minicolumns = 4;
  Bcpnn stacked("b2", plain);
  CHECK(stacked.output_shape({Shape{2, 12}}) == Shape{2, 1});
  CHECK_THROWS_WITH(stacked.output_shape({Shape{2, 10}}),
                    Catch::Contains("layer 'b2' (bcpnn)") && Catch::Contains("10 input units"));
}

TEST_CASE("a tiny bcpnn layer separates two clusters without labels", "[bcpnn][layer]") {
  // Two prototypes over 16 inputs, each sample a prototype with 10% of its values flipped; one
  // hypercolumn of two units must come to answer each cluster with its own unit.
  BcpnnOptions o;
  o.hypercolumns = 1;
  o.minicolumns = 2;
  o.trace_rate = 0.05f;
  o.init_noise = 0.3f;
  const int64_t features = 16, rows = 16;
  LayerHarness h(std::make_unique<Bcpnn>("b", o), {Shape{rows, features}});
  const auto batch = [&](uint64_t draw, std::vector<int>& cluster) {
    std::vector<float> x(static_cast<size_t>(rows * features));
    cluster.assign(static_cast<size_t>(rows), 0);
    for (int64_t r = 0; r < rows; ++r) {
      const int c = rng::uniform(draw, 1, static_cast<uint64_t>(r)) < 0.5f ? 0 : 1;
      cluster[static_cast<size_t>(r)] = c;
      for (int64_t f = 0; f < features; ++f) {
        const bool on = c == 0 ? f < features / 2 : f % 2 == 0;
        const bool flip = rng::uniform(draw, 2, static_cast<uint64_t>(r * features + f)) < 0.1f;
        x[static_cast<size_t>(r * features + f)] = on != flip ? 1.0f : 0.0f;
      }
    }
    return x;
  };
  std::vector<int> cluster;
  for (int64_t step = 0; step < 200; ++step) {
    h.input(0).copy_from_host(batch(100 + static_cast<uint64_t>(step), cluster));
    h.forward(learning_step(step, rows));
  }
  int64_t agree = 0, total = 0;
  std::array<std::array<int64_t, 2>, 2> votes{};
  for (uint64_t draw = 0; draw < 8; ++draw) {
    h.input(0).copy_from_host(batch(5000 + draw, cluster));
    const auto y = h.forward(layers::StepInfo{layers::Mode::inference, 0, rows});
    for (int64_t r = 0; r < rows; ++r) {
      const int unit = y[static_cast<size_t>(2 * r)] > y[static_cast<size_t>(2 * r + 1)] ? 0 : 1;
      ++votes[static_cast<size_t>(cluster[static_cast<size_t>(r)])][static_cast<size_t>(unit)];
    }
  }
  // The unit each cluster chose most; they must differ and be chosen nearly always.
  const int unit0 = votes[0][0] >= votes[0][1] ? 0 : 1, unit1 = votes[1][0] >= votes[1][1] ? 0 : 1;
  agree = votes[0][static_cast<size_t>(unit0)] + votes[1][static_cast<size_t>(unit1)];
  total = votes[0][0] + votes[0][1] + votes[1][0] + votes[1][1];
  std::printf("[tolerance] bcpnn two clusters: %lld of %lld samples on their cluster's unit\n",
              static_cast<long long>(agree), static_cast<long long>(total));
  CHECK(unit0 != unit1);
  CHECK(static_cast<double>(agree) >= 0.95 * static_cast<double>(total));
}

TEST_CASE("bcpnn layer with bf16 traces keeps them as bf16 would after every update", "[bcpnn][layer]") {
  BcpnnOptions o;
  o.hypercolumns = 2;
  o.minicolumns = 4;
  o.trace_rate = 0.01f;
  LayerHarness wide(std::make_unique<Bcpnn>("b", o), {Shape{8, 6}});
  o.trace_precision = ElementType::bf16;
  LayerHarness narrow(std::make_unique<Bcpnn>("b", o), {Shape{8, 6}});
  std::vector<float> x(48);
  for (size_t k = 0; k < x.size(); ++k) x[k] = rng::uniform(9, 0, k);
  for (LayerHarness* h : {&wide, &narrow}) {
    h->input(0).copy_from_host(x);
    h->forward(learning_step(0, 8));
  }
  int64_t differ = 0;
  const auto kept = narrow.params().at("b.p_ij").value.to_host();
  const auto full = wide.params().at("b.p_ij").value.to_host();
  for (size_t k = 0; k < kept.size(); ++k) {
    CHECK(half_float::rounded(kept[k], ElementType::bf16) == kept[k]);
    CHECK(kept[k] == half_float::rounded(full[k], ElementType::bf16));
    differ += kept[k] != full[k] ? 1 : 0;
  }
  CHECK(differ > 0);
}
