// The batch-norm kernels in double: statistics and normalisation against a host reference,
// every gradient against central finite differences, with and without an activation fused in
// as the epilogue.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "support/double_views.hpp"
#include "support/gradient_check.hpp"
#include "tessera/backends/kokkos/batch_norm_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace kb = tessera::kokkos_backend;
using tessera::testing::check_gradient;
using tessera::testing::device_copy;
using tessera::testing::DoubleView;
using tessera::testing::host_copy;
using tessera::testing::random_vector;

namespace {

constexpr double epsilon = 1e-5;
using tessera::ops::BatchNormEpilogue;
using tessera::ops::EltwiseKind;

/// The per-channel values the passes read, in double on the device.
struct ChannelsDouble {
  DoubleView mean, invstd, scale, shift;
  kb::BatchNormChannels<double> views() const { return {mean, invstd, scale, shift}; }
};

ChannelsDouble channels_of(const std::vector<double>& mean, const std::vector<double>& invstd,
                           const std::vector<double>& gamma, const std::vector<double>& beta) {
  ChannelsDouble ch{device_copy(mean), device_copy(invstd), DoubleView("scale", mean.size()),
                    DoubleView("shift", mean.size())};
  kb::batch_norm_scale_shift<double>(ch.mean, ch.invstd, device_copy(gamma), device_copy(beta), ch.scale, ch.shift);
  return ch;
}

/// The batch-statistics pipeline of the layer, run on the kernels in double, with the
/// activation `epilogue` applied to its output.
struct BatchNormDouble {
  int64_t rows, channels;
  kb::ChannelSumWorkspace workspace;
  BatchNormEpilogue epilogue;

  BatchNormDouble(int64_t r, int64_t c, BatchNormEpilogue e = {})
      : rows(r), channels(c), workspace(kb::make_channel_sum_workspace(r, c)), epilogue(e) {}

  std::vector<double> sums(const std::vector<double>& x) const {
    DoubleView s("sums", static_cast<size_t>(2 * channels));
    kb::batch_norm_statistics<double>(device_copy(x), rows, channels, workspace, s);
    return host_copy(s);
  }
  /// mean and invstd from the sums, as the layer computes them.
  void moments(const std::vector<double>& x, std::vector<double>& mean, std::vector<double>& invstd) const {
    const auto s = sums(x);
    mean.assign(static_cast<size_t>(channels), 0.0);
    invstd.assign(static_cast<size_t>(channels), 0.0);
    for (int64_t c = 0; c < channels; ++c) {
      const size_t k = static_cast<size_t>(c);
      mean[k] = s[k] / static_cast<double>(rows);
      const double var = s[k + static_cast<size_t>(channels)] / static_cast<double>(rows) - mean[k] * mean[k];
      invstd[k] = 1.0 / std::sqrt(var + epsilon);
    }
  }
  std::vector<double> normalize(const std::vector<double>& x, const std::vector<double>& mean,
                                const std::vector<double>& invstd, const std::vector<double>& gamma,
                                const std::vector<double>& beta) const {
    DoubleView y("y", x.size());
    kb::batch_norm_forward<double>(device_copy(x), rows, channels, channels_of(mean, invstd, gamma, beta).views(),
                                   epilogue, y);
    return host_copy(y);
  }
  std::vector<double> forward(const std::vector<double>& x, const std::vector<double>& gamma,
                              const std::vector<double>& beta) const {
    std::vector<double> mean, invstd;
    moments(x, mean, invstd);
    return normalize(x, mean, invstd, gamma, beta);
  }
};

double weighted_sum(const std::vector<double>& y, const std::vector<double>& r) {
  double l = 0.0;
  for (size_t i = 0; i < y.size(); ++i) l += y[i] * r[i];
  return l;
}

}  // namespace

TEST_CASE("batch norm statistics equal host sums for any block split", "[batch_norm][kernels]") {
  for (const auto& [rows, channels] : {std::pair<int64_t, int64_t>{1, 3}, {37, 3}, {1000, 5}, {5000, 40}}) {
    const BatchNormDouble bn(rows, channels);
    const auto x = random_vector<double>(static_cast<size_t>(rows * channels), 3u, -2.0, 3.0);
    const auto s = bn.sums(x);
    double worst = 0.0;
    for (int64_t c = 0; c < channels; ++c) {
      double sx = 0.0, sxx = 0.0;
      for (int64_t r = 0; r < rows; ++r) {
        const double v = x[static_cast<size_t>(r * channels + c)];
        sx += v;
        sxx += v * v;
      }
      worst = std::max(worst, std::abs(s[static_cast<size_t>(c)] - sx) / std::max(1.0, std::abs(sx)));
      worst = std::max(worst, std::abs(s[static_cast<size_t>(channels + c)] - sxx) / std::max(1.0, sxx));
    }
    INFO("rows " << rows << " channels " << channels);
    CHECK(worst < 1e-12);
  }
}

TEST_CASE("batch norm normalises each channel to gamma·x̂ + beta", "[batch_norm][kernels]") {
  const int64_t rows = 50, channels = 4;
  const BatchNormDouble bn(rows, channels);
  const auto x = random_vector<double>(static_cast<size_t>(rows * channels), 5u, -1.0, 4.0);
  const std::vector<double> gamma{0.5, 2.0, -1.0, 1.5}, beta{0.0, 1.0, -2.0, 0.25};
  const auto y = bn.forward(x, gamma, beta);
  for (int64_t c = 0; c < channels; ++c) {
    double mean = 0.0, sq = 0.0;
    for (int64_t r = 0; r < rows; ++r) mean += y[static_cast<size_t>(r * channels + c)] / rows;
    for (int64_t r = 0; r < rows; ++r) sq += std::pow(y[static_cast<size_t>(r * channels + c)] - mean, 2) / rows;
    const size_t k = static_cast<size_t>(c);
    CHECK(mean == Approx(beta[k]).margin(1e-12));
    // The variance of x̂ is var/(var + eps), slightly below one.
    CHECK(std::sqrt(sq) == Approx(std::abs(gamma[k])).epsilon(1e-4));
  }
}

namespace {

/// The activations a batch norm fuses in the gradient checks: none, and smooth ones (a kink
/// such as ReLU's at 0 is no place for finite differences; the fused-against-separate model
/// tests cover ReLU).
std::vector<BatchNormEpilogue> epilogues() {
  return {{}, {true, EltwiseKind::elu, 0.7f}, {true, EltwiseKind::tanh, 0.0f}, {true, EltwiseKind::gelu, 0.0f}};
}

std::string name_of(const BatchNormEpilogue& e) {
  return e.active ? tessera::ops::activation_info(e.kind).name : "no activation";
}

}  // namespace

TEST_CASE("batch norm gradients with batch statistics match finite differences in double, activations fused or not",
          "[batch_norm][kernels][gradient]") {
  for (const BatchNormEpilogue& epilogue : epilogues()) {
  INFO(name_of(epilogue));
  const int64_t rows = 37, channels = 3;
  const BatchNormDouble bn(rows, channels, epilogue);
  auto x = random_vector<double>(static_cast<size_t>(rows * channels), 11u, -1.0, 2.0);
  std::vector<double> gamma{0.7, 1.3, -0.4}, beta{0.1, -0.2, 0.3};
  const auto r = random_vector<double>(x.size(), 12u);

  // Analytic: the two backward stages with dy = r.
  std::vector<double> mean, invstd;
  bn.moments(x, mean, invstd);
  const ChannelsDouble ch = channels_of(mean, invstd, gamma, beta);
  DoubleView gsums("grad_sums", static_cast<size_t>(2 * channels));
  kb::batch_norm_backward_statistics<double>(device_copy(x), device_copy(r), rows, channels, ch.views(), epilogue,
                                             bn.workspace, gsums);
  DoubleView dx("dx", x.size());
  kb::batch_norm_backward_data<double>(device_copy(x), device_copy(r), rows, channels, ch.views(), epilogue, gsums,
                                       static_cast<double>(rows), true, dx);
  const auto sums = host_copy(gsums);
  const std::vector<double> dbeta(sums.begin(), sums.begin() + channels);
  const std::vector<double> dgamma(sums.begin() + channels, sums.end());

  const double h = 1e-5, floor = 1e-6;
  const auto check_x = check_gradient<double>(
      x, host_copy(dx), [&](const std::vector<double>& v) { return weighted_sum(bn.forward(v, gamma, beta), r); }, h,
      floor);
  const auto check_gamma = check_gradient<double>(
      gamma, dgamma, [&](const std::vector<double>& v) { return weighted_sum(bn.forward(x, v, beta), r); }, h, floor);
  const auto check_beta = check_gradient<double>(
      beta, dbeta, [&](const std::vector<double>& v) { return weighted_sum(bn.forward(x, gamma, v), r); }, h, floor);
  std::printf("[tolerance] batch_norm kernels (double, batch stats, %s): dx %.3g, dgamma %.3g, dbeta %.3g (limit "
              "1e-6)\n",
              name_of(epilogue).c_str(), check_x.max_rel_error, check_gamma.max_rel_error, check_beta.max_rel_error);
  INFO("dx " << check_x.str() << "\ndgamma " << check_gamma.str() << "\ndbeta " << check_beta.str());
  CHECK(check_x.max_rel_error < 1e-6);
  CHECK(check_gamma.max_rel_error < 1e-6);
  CHECK(check_beta.max_rel_error < 1e-6);
  }
}

TEST_CASE("batch norm gradients with fixed (inference) statistics match finite differences in double, activations "
          "fused or not",
          "[batch_norm][kernels][gradient]") {
  for (const BatchNormEpilogue& epilogue : epilogues()) {
  INFO(name_of(epilogue));
  const int64_t rows = 20, channels = 2;
  const BatchNormDouble bn(rows, channels, epilogue);
  const auto x = random_vector<double>(static_cast<size_t>(rows * channels), 21u, -1.0, 2.0);
  const std::vector<double> mean{0.3, -0.5}, invstd{1.7, 0.6}, gamma{1.2, -0.8}, beta{0.0, 0.5};
  const auto r = random_vector<double>(x.size(), 22u);

  const ChannelsDouble ch = channels_of(mean, invstd, gamma, beta);
  DoubleView gsums("grad_sums", static_cast<size_t>(2 * channels));
  kb::batch_norm_backward_statistics<double>(device_copy(x), device_copy(r), rows, channels, ch.views(), epilogue,
                                             bn.workspace, gsums);
  DoubleView dx("dx", x.size());
  kb::batch_norm_backward_data<double>(device_copy(x), device_copy(r), rows, channels, ch.views(), epilogue, gsums,
                                       static_cast<double>(rows), false, dx);
  const auto sums = host_copy(gsums);
  const std::vector<double> dgamma(sums.begin() + channels, sums.end());
  const double h = 1e-5, floor = 1e-6;
  const auto check_x = check_gradient<double>(
      x, host_copy(dx),
      [&](const std::vector<double>& v) { return weighted_sum(bn.normalize(v, mean, invstd, gamma, beta), r); }, h,
      floor);
  const auto check_gamma = check_gradient<double>(
      gamma, dgamma,
      [&](const std::vector<double>& v) { return weighted_sum(bn.normalize(x, mean, invstd, v, beta), r); }, h, floor);
  std::printf("[tolerance] batch_norm kernels (double, fixed stats, %s): dx %.3g, dgamma %.3g (limit 1e-6)\n",
              name_of(epilogue).c_str(), check_x.max_rel_error, check_gamma.max_rel_error);
  INFO("dx " << check_x.str() << "\ndgamma " << check_gamma.str());
  CHECK(check_x.max_rel_error < 1e-6);
  CHECK(check_gamma.max_rel_error < 1e-6);
  }
}

TEST_CASE("the Kokkos batch norm op runs the kernels on float tensors", "[batch_norm][kernels]") {
  tessera::ops::BatchNormGeometry g;
  g.rows = 6;
  g.channels = 2;
  auto op = kb::make_batch_norm(g);
  CHECK(op->backend() == "kokkos");
  tessera::Tensor x(tessera::Shape{1, 2, 3, 2}), sums(tessera::Shape{4});
  x.copy_from_host({1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60});
  op->statistics(x, sums);
  const auto s = sums.to_host();
  CHECK(s[0] == Approx(21.0));
  CHECK(s[1] == Approx(210.0));
  CHECK(s[2] == Approx(91.0));
  CHECK(s[3] == Approx(9100.0));
  tessera::Tensor wrong(tessera::Shape{4, 2});
  CHECK_THROWS_AS(op->statistics(wrong, sums), tessera::ShapeError);
}

TEST_CASE("batch norm batch statistics: mean, invstd and the running update from the sums", "[batch_norm][kernels]") {
  // Channel 1 is constant: E[x²] − mean² may round below zero there and must clamp to 0.
  const std::vector<float> x{1, 0.1f, -2, 0.1f, 4, 0.1f, 0.5f, 0.1f, 3, 0.1f};
  const int64_t rows = 5, channels = 2;
  const double count = rows, momentum = 0.1, eps = 1e-5;
  std::vector<float> sums(2 * channels, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) {
      const float v = x[static_cast<size_t>(r * channels + c)];
      sums[static_cast<size_t>(c)] += v;
      sums[static_cast<size_t>(channels + c)] += v * v;
    }
  const std::vector<float> running_mean0{0.5f, -1.0f}, running_var0{2.0f, 0.25f};
  const tessera::Tensor sums_t(tessera::Shape{2 * channels}), mean(tessera::Shape{channels}),
      invstd(tessera::Shape{channels}), running_mean(tessera::Shape{channels}), running_var(tessera::Shape{channels});
  sums_t.copy_from_host(sums);
  running_mean.copy_from_host(running_mean0);
  running_var.copy_from_host(running_var0);
  kb::batch_norm_batch_statistics(sums_t, count, momentum, eps, mean, invstd, running_mean, running_var);

  const auto m = mean.to_host(), is = invstd.to_host(), rm = running_mean.to_host(), rv = running_var.to_host();
  for (int64_t c = 0; c < channels; ++c) {
    const auto k = static_cast<size_t>(c);
    const double mu = sums[k] / count;
    const double var = std::max(static_cast<double>(sums[k + static_cast<size_t>(channels)]) / count - mu * mu, 0.0);
    CHECK(m[k] == Approx(mu).epsilon(1e-6));
    CHECK(is[k] == Approx(1.0 / std::sqrt(var + eps)).epsilon(1e-5));
    CHECK(rm[k] == Approx((1.0 - momentum) * running_mean0[k] + momentum * mu).epsilon(1e-6));
    CHECK(rv[k] == Approx((1.0 - momentum) * running_var0[k] + momentum * var * count / (count - 1.0)).epsilon(1e-6));
  }
  CHECK(std::isfinite(is[1]));
}

TEST_CASE("batch norm running statistics: mean and invstd for inference", "[batch_norm][kernels]") {
  const tessera::Tensor running_mean(tessera::Shape{3}), running_var(tessera::Shape{3}), mean(tessera::Shape{3}),
      invstd(tessera::Shape{3});
  running_mean.copy_from_host({0.5f, -1.0f, 2.0f});
  running_var.copy_from_host({4.0f, 0.25f, 0.0f});
  kb::batch_norm_running_statistics(running_mean, running_var, 1e-5, mean, invstd);
  CHECK(mean.to_host() == std::vector<float>{0.5f, -1.0f, 2.0f});
  const auto is = invstd.to_host();
  CHECK(is[0] == Approx(1.0 / std::sqrt(4.0 + 1e-5)).epsilon(1e-6));
  CHECK(is[1] == Approx(1.0 / std::sqrt(0.25 + 1e-5)).epsilon(1e-6));
  CHECK(is[2] == Approx(1.0 / std::sqrt(1e-5)).epsilon(1e-6));
}

TEST_CASE("the Kokkos batch norm op on bf16 activations equals fp32 rounded once to bf16", "[batch_norm][precision]") {
  using tessera::ElementType;
  using tessera::Shape;
  using tessera::Tensor;
  const int64_t rows = 300, channels = 5;
  tessera::ops::BatchNormGeometry g32;
  g32.rows = rows;
  g32.channels = channels;
  tessera::ops::BatchNormGeometry g16 = g32;
  g16.type = ElementType::bf16;
  auto op32 = kb::make_batch_norm(g32), op16 = kb::make_batch_norm(g16);
  const Shape s{rows, channels};
  // bf16 values in both types, so that both ops read the same numbers.
  const auto pair_of = [&](uint32_t seed) {
    Tensor wide(s), narrow(s, ElementType::bf16);
    wide.copy_from_host(random_vector<float>(static_cast<size_t>(rows * channels), seed, -2.0, 3.0));
    tessera::deep_copy(narrow, wide);
    tessera::deep_copy(wide, narrow);
    return std::make_pair(wide, narrow);
  };
  const auto [x32, x16] = pair_of(1);
  const auto [dy32, dy16] = pair_of(2);
  const auto vector_of = [](std::vector<float> v) {
    Tensor t(Shape{static_cast<int64_t>(v.size())});
    t.copy_from_host(v);
    return t;
  };
  const Tensor mean = vector_of({0.5f, -0.2f, 0.1f, 0.0f, 1.0f}), invstd = vector_of({1.5f, 0.7f, 1.0f, 2.0f, 0.9f});
  const Tensor gamma = vector_of({1.0f, 0.5f, -1.5f, 2.0f, 1.2f}), beta = vector_of({0.0f, 0.3f, -0.1f, 1.0f, 0.2f});
  Tensor sums32(Shape{2 * channels}), sums16(Shape{2 * channels});
  // The statistics are fp32 sums (in double) of the same values: equal.
  op32->statistics(x32, sums32);
  op16->statistics(x16, sums16);
  CHECK(sums16.to_host() == sums32.to_host());
  // The outputs: the fp32 result rounded to bf16, exactly.
  const auto rounded = [](const Tensor& t) {
    Tensor r(t.shape(), ElementType::bf16);
    tessera::deep_copy(r, t);
    return r.to_host();
  };
  Tensor y32(s), y16(s, ElementType::bf16), dx32(s), dx16(s, ElementType::bf16);
  op32->normalize(x32, mean, invstd, gamma, beta, y32);
  op16->normalize(x16, mean, invstd, gamma, beta, y16);
  CHECK(y16.to_host() == rounded(y32));
  op32->backward_statistics(x32, dy32, mean, invstd, sums32);
  op16->backward_statistics(x16, dy16, mean, invstd, sums16);
  CHECK(sums16.to_host() == sums32.to_host());
  for (const bool batch_stats : {true, false}) {
    op32->backward_data(x32, dy32, mean, invstd, gamma, sums32, static_cast<double>(rows), batch_stats, dx32);
    op16->backward_data(x16, dy16, mean, invstd, gamma, sums16, static_cast<double>(rows), batch_stats, dx16);
    CHECK(dx16.to_host() == rounded(dx32));
  }
  CHECK_THROWS_WITH(op16->statistics(x32, sums16), Catch::Contains("x is fp32, expected bf16"));
}

namespace {

/// `n` values of NaN: what an output holds before a kernel writes it, so that an element it
/// skips shows.
std::vector<float> poison(size_t n) { return std::vector<float>(n, std::nanf("")); }

/// max |got − want| / max(|want|, floor) over the elements; NaN where any is NaN.
double worst_error(const std::vector<float>& got, const std::vector<double>& want, double floor) {
  REQUIRE(got.size() == want.size());
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) return std::nan("");
    worst = std::max(worst, std::abs(got[i] - want[i]) / std::max(std::abs(want[i]), floor));
  }
  return worst;
}

}  // namespace

TEST_CASE("the float batch norm op, fused or not, in fp32 and bf16, equals the double kernels on odd sizes",
          "[batch_norm][kernels][precision]") {
  using tessera::ElementType;
  using tessera::Shape;
  using tessera::Tensor;
  const std::vector<BatchNormEpilogue> cases{
      {}, {true, EltwiseKind::relu, 0.0f}, {true, EltwiseKind::leaky_relu, 0.01f}, {true, EltwiseKind::elu, 1.0f}};
  // 1100 channels: more than a host block keeps on its stack (the double path).
  for (const auto& [rows, channels] :
       {std::pair<int64_t, int64_t>{1001, 7}, {257, 1}, {63, 33}, {17, 130}, {9, 1100}}) {
    for (const BatchNormEpilogue& epilogue : cases) {
      for (const ElementType type : {ElementType::fp32, ElementType::bf16}) {
        INFO(rows << " rows, " << channels << " channels, " << name_of(epilogue) << ", "
                  << tessera::element_type_name(type));
        // Values the type holds exactly, so that both sides read the same numbers.
        const auto exact = [&](uint32_t seed, double lo, double hi) {
          Tensor t(Shape{rows, channels}, type);
          t.copy_from_host(random_vector<float>(static_cast<size_t>(rows * channels), seed, lo, hi));
          return t;
        };
        const Tensor x = exact(31, -2.0, 3.0), dy = exact(32, -1.0, 1.0);
        const std::vector<float> xh = x.to_host(), dyh = dy.to_host();
        const std::vector<double> xd(xh.begin(), xh.end()), dyd(dyh.begin(), dyh.end());
        std::vector<float> gamma_h(static_cast<size_t>(channels)), beta_h(gamma_h.size());
        for (size_t c = 0; c < gamma_h.size(); ++c) {
          gamma_h[c] = 0.5f + 0.25f * static_cast<float>(c % 5);
          beta_h[c] = 0.1f * static_cast<float>(c % 3) - 0.1f;
        }
        // The double pipeline: statistics, normalisation with the epilogue, both backward stages.
        const BatchNormDouble bn(rows, channels, epilogue);
        std::vector<double> mean, invstd;
        bn.moments(xd, mean, invstd);
        const std::vector<double> gamma(gamma_h.begin(), gamma_h.end()), beta(beta_h.begin(), beta_h.end());
        const ChannelsDouble ch = channels_of(mean, invstd, gamma, beta);
        const auto y_want = bn.normalize(xd, mean, invstd, gamma, beta);
        DoubleView gsums("grad_sums", static_cast<size_t>(2 * channels)), dxd("dx", xd.size());
        kb::batch_norm_backward_statistics<double>(device_copy(xd), device_copy(dyd), rows, channels, ch.views(),
                                                   epilogue, bn.workspace, gsums);
        kb::batch_norm_backward_data<double>(device_copy(xd), device_copy(dyd), rows, channels, ch.views(), epilogue,
                                             gsums, static_cast<double>(rows), true, dxd);
        const auto sums_want = host_copy(gsums), dx_want = host_copy(dxd);

        // The op in float, as the layer runs it.
        tessera::ops::BatchNormGeometry g;
        g.rows = rows;
        g.channels = channels;
        g.type = type;
        g.epilogue = epilogue;
        auto op = kb::make_batch_norm(g);
        const auto vec = [](const std::vector<float>& v) {
          Tensor t(Shape{static_cast<int64_t>(v.size())});
          t.copy_from_host(v);
          return t;
        };
        Tensor sums(Shape{2 * channels}), gsums32(Shape{2 * channels});
        op->statistics(x, sums);
        const auto s = sums.to_host();
        const auto sums_d = bn.sums(xd);
        for (size_t k = 0; k < s.size(); ++k) CHECK(s[k] == Approx(sums_d[k]).epsilon(1e-6).margin(1e-4));
        std::vector<float> mean_h(mean.size()), invstd_h(mean.size());
        for (size_t c = 0; c < mean.size(); ++c) {
          mean_h[c] = static_cast<float>(mean[c]);
          invstd_h[c] = static_cast<float>(invstd[c]);
        }
        const Tensor mean_t = vec(mean_h), invstd_t = vec(invstd_h), gamma_t = vec(gamma_h), beta_t = vec(beta_h);
        Tensor y(Shape{rows, channels}, type), dx(Shape{rows, channels}, type);
        y.copy_from_host(poison(static_cast<size_t>(rows * channels)));
        dx.copy_from_host(poison(static_cast<size_t>(rows * channels)));
        op->normalize(x, mean_t, invstd_t, gamma_t, beta_t, y);
        op->backward_statistics(x, dy, mean_t, invstd_t, gsums32);
        op->backward_data(x, dy, mean_t, invstd_t, gamma_t, gsums32, static_cast<double>(rows), true, dx);
        // fp32: a few roundings of float arithmetic; bf16: the output rounded once (2^-8), and dx
        // formed from the same fp32 sums. Errors are relative to max(|y|, 1): the op computes
        // x·scale + (β − mean·scale), as PyTorch's CPU kernel does, whose rounding is that of
        // mean·scale where γ·x̂ + β nears zero.
        const double bound = type == ElementType::fp32 ? 1e-5 : 0x1p-8 + 1e-5;
        const double y_error = worst_error(y.to_host(), y_want, 1.0);
        const double dx_error = worst_error(dx.to_host(), dx_want, 1e-2);
        const auto gs = gsums32.to_host();
        double sums_error = 0.0;
        for (size_t k = 0; k < gs.size(); ++k)
          sums_error = std::max(sums_error, std::abs(gs[k] - sums_want[k]) / std::max(1.0, std::abs(sums_want[k])));
        INFO("y " << y_error << ", dx " << dx_error << ", backward sums " << sums_error);
        CHECK(y_error <= bound);
        CHECK(dx_error <= 4 * bound);
        CHECK(sums_error <= 1e-5);
      }
    }
  }
}
