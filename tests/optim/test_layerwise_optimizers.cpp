// LARS and LAMB against their update rules written out here in double (the formulas of You et
// al. 2017 and 2019 as docs/config.md states them), per parameter tensor: a weight
// matrix, a bias-like vector and a second matrix laid end to end in one buffer; and on a
// small case worked by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "support/optimizer_check.hpp"
#include "tessera/optim/lamb.hpp"
#include "tessera/optim/lars.hpp"

using namespace tessera;
using optim::Lamb;
using optim::LambOptions;
using optim::Lars;
using optim::LarsOptions;
using optim::ParameterTensors;
using tessera::testing::config_error;

namespace {

constexpr int64_t numel = testing::optimizer_numel;  // 4096
constexpr double tolerance = 2e-6;

/// Tensor 0: [0, 3000), a matrix; tensor 1: [3000, 3064), a vector; tensor 2: the rest. The
/// vector's chunk boundaries do not align with SegmentChunks' 2048, so chunks straddle nothing.
ParameterTensors three_tensors() {
  ParameterTensors t;
  t.tensors = {{0, 3000, false}, {3000, 64, true}, {3064, numel - 3064, false}};
  return t;
}

float lr_at(int step) { return static_cast<float>(0.1 * (1.0 - 0.1 * step)); }

double norm(const std::vector<double>& x, int64_t first, int64_t n) {
  double s = 0.0;
  for (int64_t i = first; i < first + n; ++i) s += x[static_cast<size_t>(i)] * x[static_cast<size_t>(i)];
  return std::sqrt(s);
}

std::vector<double> reference_lars(const LarsOptions& o, const std::vector<float>& p0,
                                   const std::vector<std::vector<float>>& grads) {
  const auto layout = three_tensors();
  std::vector<double> p(p0.begin(), p0.end()), buf(p0.size(), 0.0);
  for (size_t s = 0; s < grads.size(); ++s) {
    const std::vector<double> g(grads[s].begin(), grads[s].end());
    for (const auto& t : layout.tensors) {
      const bool excluded = o.exclude_bias_and_norm && t.vector;
      const double wn = norm(p, t.offset, t.numel), gn = norm(g, t.offset, t.numel);
      double ratio = 1.0;
      if (!excluded && wn > 0 && gn > 0) ratio = o.trust_coefficient * wn / (gn + o.weight_decay * wn + o.epsilon);
      const double wd = excluded ? 0.0 : o.weight_decay;
      for (int64_t k = t.offset; k < t.offset + t.numel; ++k) {
        const auto i = static_cast<size_t>(k);
        double d = ratio * (g[i] + wd * p[i]);
        buf[i] = s == 0 ? d : o.momentum * buf[i] + d;
        d = o.nesterov ? d + o.momentum * buf[i] : buf[i];
        p[i] -= lr_at(static_cast<int>(s)) * d;
      }
    }
  }
  return p;
}

std::vector<double> reference_lamb(const LambOptions& o, const std::vector<float>& p0,
                                   const std::vector<std::vector<float>>& grads) {
  const auto layout = three_tensors();
  std::vector<double> p(p0.begin(), p0.end()), m(p0.size(), 0.0), v(p0.size(), 0.0), u(p0.size(), 0.0);
  for (size_t s = 0; s < grads.size(); ++s) {
    const double t = static_cast<double>(s + 1);
    const double bc1 = 1.0 - std::pow(o.beta1, t), bc2 = 1.0 - std::pow(o.beta2, t);
    for (const auto& tensor : layout.tensors) {
      const bool excluded = o.exclude_bias_and_norm && tensor.vector;
      const double wd = excluded ? 0.0 : o.weight_decay;
      for (int64_t k = tensor.offset; k < tensor.offset + tensor.numel; ++k) {
        const auto i = static_cast<size_t>(k);
        const double g = grads[s][i];
        m[i] = o.beta1 * m[i] + (1 - o.beta1) * g;
        v[i] = o.beta2 * v[i] + (1 - o.beta2) * g * g;
        u[i] = (m[i] / bc1) / (std::sqrt(v[i] / bc2) + o.epsilon) + wd * p[i];
      }
      const double wn = norm(p, tensor.offset, tensor.numel), un = norm(u, tensor.offset, tensor.numel);
      const double ratio = !excluded && wn > 0 && un > 0 ? wn / un : 1.0;
      for (int64_t k = tensor.offset; k < tensor.offset + tensor.numel; ++k)
        p[static_cast<size_t>(k)] -= lr_at(static_cast<int>(s)) * ratio * u[static_cast<size_t>(k)];
    }
  }
  return p;
}

template <class Optimizer, class Options>
void check_against(const std::string& what, const Options& o,
                   std::vector<double> (*reference)(const Options&, const std::vector<float>&,
                                                    const std::vector<std::vector<float>>&)) {
  Optimizer optimizer(o);
  optimizer.set_tensors(three_tensors());
  testing::check_against_reference(
      what, optimizer, [&](const auto& p0, const auto& grads) { return reference(o, p0, grads); }, 7, lr_at,
      tolerance);
}

}  // namespace

TEST_CASE("lars matches its update rule per tensor", "[optim][lars]") {
  LarsOptions o;
  o.lr = 0.1;
  check_against<Lars>("lars momentum", o, reference_lars);
  o.weight_decay = 5e-4;
  o.trust_coefficient = 0.02;
  check_against<Lars>("lars weight decay", o, reference_lars);
  o.nesterov = true;
  check_against<Lars>("lars nesterov", o, reference_lars);
  o.exclude_bias_and_norm = false;
  check_against<Lars>("lars without exclusions", o, reference_lars);
  o.momentum = 0.0;
  o.nesterov = false;
  check_against<Lars>("lars without momentum", o, reference_lars);
}

TEST_CASE("lamb matches its update rule per tensor", "[optim][lamb]") {
  LambOptions o;
  check_against<Lamb>("lamb defaults", o, reference_lamb);
  o.weight_decay = 0.0;
  o.beta1 = 0.8;
  check_against<Lamb>("lamb without decay", o, reference_lamb);
  o.weight_decay = 0.1;
  o.exclude_bias_and_norm = false;
  check_against<Lamb>("lamb without exclusions", o, reference_lamb);
}

TEST_CASE("lars and lamb on a case worked by hand", "[optim][lars][lamb]") {
  // A weight w = (3, 4) (norm 5) with gradient (0.6, 0.8) (norm 1), and a bias b = 1 or 2.
  ParameterTensors layout;
  layout.tensors = {{0, 2, false}, {2, 1, true}};
  Tensor values(Shape{3}), grads(Shape{3});

  // LARS, eta 0.1, no decay, no momentum, lr 1: r = 0.1·5/1 = 0.5, w −= 0.5·g = (2.7, 3.6);
  // the bias, left out, takes a plain step 1 − 0.5 = 0.5.
  LarsOptions lo;
  lo.lr = 1.0;
  lo.momentum = 0.0;
  lo.trust_coefficient = 0.1;
  lo.epsilon = 0.0;
  Lars lars(lo);
  lars.set_tensors(layout);
  values.copy_from_host({3.0f, 4.0f, 1.0f});
  grads.copy_from_host({0.6f, 0.8f, 0.5f});
  lars.bind(values, grads);
  lars.step(1.0f);
  auto p = values.to_host();
  CHECK(p[0] == Approx(2.7));
  CHECK(p[1] == Approx(3.6));
  CHECK(p[2] == Approx(0.5));
  REQUIRE(lars.last_ratios().size() == 2);
  CHECK(lars.last_ratios()[0] == Approx(0.5));
  CHECK(lars.last_ratios()[1] == 1.0);

  // LAMB's first step, no decay, epsilon 0: the bias corrections make m̂ = g and v̂ = g², so
  // u = g/|g| = (1, 1), ‖u‖ = √2, r = 5/√2; lr 0.1: w −= 0.1·5/√2·(1, 1) = w − 0.353553.
  // The bias (g = −1) takes Adam's step: b = 2 + 0.1 = 2.1.
  LambOptions mo;
  mo.weight_decay = 0.0;
  mo.epsilon = 0.0;
  Lamb lamb(mo);
  lamb.set_tensors(layout);
  values.copy_from_host({3.0f, 4.0f, 2.0f});
  grads.copy_from_host({0.6f, 0.8f, -1.0f});
  lamb.bind(values, grads);
  lamb.step(0.1f);
  p = values.to_host();
  CHECK(p[0] == Approx(3.0 - 0.5 / std::sqrt(2.0)));
  CHECK(p[1] == Approx(4.0 - 0.5 / std::sqrt(2.0)));
  CHECK(p[2] == Approx(2.1));
  CHECK(lamb.last_ratios()[0] == Approx(5.0 / std::sqrt(2.0)));
}

TEST_CASE("a zero tensor or a zero gradient keeps the trust ratio at 1", "[optim][lars][lamb]") {
  // A freshly zeroed weight (‖w‖ = 0) would otherwise never move under LARS or LAMB.
  Tensor values(Shape{2}), grads(Shape{2});
  values.copy_from_host({0.0f, 0.0f});
  grads.copy_from_host({1.0f, -1.0f});
  LarsOptions lo;
  lo.lr = 0.5;
  lo.momentum = 0.0;
  Lars lars(lo);
  lars.bind(values, grads);  // never told the layout: one tensor
  lars.step(0.5f);
  CHECK(values.to_host() == std::vector<float>{-0.5f, 0.5f});
  CHECK(lars.last_ratios() == std::vector<double>{1.0});
}

TEST_CASE("lars and lamb keep their state in checkpoints and resume identically", "[optim][lars][lamb]") {
  auto run = [](optim::Optimizer& a, optim::Optimizer& b, const std::vector<std::string>& names) {
    Tensor va(Shape{numel}), vb(Shape{numel}), g(Shape{numel});
    va.copy_from_host(testing::optimizer_vector(3, 1, 1.0f));
    a.set_tensors(three_tensors());
    b.set_tensors(three_tensors());
    a.bind(va, g);
    for (int s = 0; s < 3; ++s) {
      g.copy_from_host(testing::optimizer_vector(3, 10 + static_cast<uint64_t>(s), 0.5f));
      a.step(lr_at(s));
    }
    // Restore a copy into b (what load_checkpoint does), then both take the same steps.
    vb.copy_from_host(va.to_host());
    b.bind(vb, g);
    auto sa = a.state(), sb = b.state();
    REQUIRE(sa.size() == names.size());
    for (size_t k = 0; k < sa.size(); ++k) {
      CHECK(sa[k].first == names[k]);
      sb[k].second.copy_from_host(sa[k].second.to_host());
    }
    b.set_steps(a.steps());
    for (int s = 3; s < 6; ++s) {
      g.copy_from_host(testing::optimizer_vector(3, 10 + static_cast<uint64_t>(s), 0.5f));
      a.step(lr_at(s));
      b.step(lr_at(s));
    }
    CHECK(va.to_host() == vb.to_host());
  };
  LarsOptions lo;
  lo.lr = 0.1;
  Lars la(lo), lb(lo);
  run(la, lb, {"lars.momentum"});
  Lamb ma{LambOptions{}}, mb{LambOptions{}};
  run(ma, mb, {"lamb.m", "lamb.v"});
}

TEST_CASE("lars and lamb settings out of range are refused naming the key", "[optim][lars][lamb]") {
  using nlohmann::json;
  CHECK_THAT(config_error({{"type", "lars"}, {"lr", 1.0}, {"trust_coefficient", -0.001}}),
             Catch::Contains("$.optimizer.trust_coefficient") && Catch::Contains("must be positive"));
  CHECK_THAT(config_error({{"type", "lars"}}), Catch::Contains("$.optimizer.lr"));
  CHECK_THAT(config_error({{"type", "lars"}, {"lr", 1.0}, {"momentum", 1.0}}), Catch::Contains("$.optimizer.momentum"));
  CHECK_THAT(config_error({{"type", "lars"}, {"lr", 1.0}, {"momentum", 0.0}, {"nesterov", true}}),
             Catch::Contains("$.optimizer.nesterov"));
  CHECK_THAT(config_error({{"type", "lamb"}, {"beta2", 1.5}}), Catch::Contains("$.optimizer.beta2"));
  CHECK_THAT(config_error({{"type", "lamb"}, {"weight_decay", -1}}), Catch::Contains("$.optimizer.weight_decay"));
  CHECK_THAT(config_error({{"type", "lamb"}, {"trust_coefficient", 0.1}}),
             Catch::Contains("$.optimizer.trust_coefficient"));  // LAMB has no eta: an unknown key
  CHECK_THAT(config_error({{"type", "lion"}}), Catch::Contains("known: sgd, adam, lars, lamb"));
  CHECK(config_error({{"type", "lamb"}}) == "no error");
}

TEST_CASE("a layout that does not tile the buffer is refused at the first step", "[optim][lars]") {
  Tensor values(Shape{10}), grads(Shape{10});
  ParameterTensors gap;
  gap.tensors = {{0, 4, false}, {5, 5, false}};
  LarsOptions lo;
  lo.lr = 0.1;
  Lars lars(lo);
  lars.set_tensors(gap);
  lars.bind(values, grads);
  CHECK_THROWS_WITH(lars.step(0.1f), Catch::Contains("parameter tensor 1 covers [5, 10)"));
}
