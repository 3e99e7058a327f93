// The activation kernels in double: values against the formulas, derivatives against central
// finite differences (inputs kept away from the kink at 0).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "support/double_views.hpp"
#include "support/gradient_check.hpp"
#include "tessera/backends/kokkos/activation_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace kb = tessera::kokkos_backend;
using tessera::ops::EltwiseKind;
using tessera::testing::check_gradient;
using tessera::testing::device_copy;
using tessera::testing::DoubleView;
using tessera::testing::host_copy;
using tessera::testing::random_vector;

namespace {

std::vector<double> inputs_away_from_zero(size_t n, unsigned seed) {
  auto x = random_vector<double>(n, seed, -3.0, 3.0);
  for (auto& v : x)
    if (std::abs(v) < 0.05) v = v < 0 ? -0.05 - v : 0.05 + v;
  return x;
}

double reference(EltwiseKind kind, double alpha, double x) {
  if (kind == EltwiseKind::tanh) return std::tanh(x);
  if (kind == EltwiseKind::scale) return alpha * x;
  if (kind == EltwiseKind::sigmoid) return 1.0 / (1.0 + std::exp(-x));
  if (x > 0) return x;
  switch (kind) {
    case EltwiseKind::leaky_relu: return alpha * x;
    case EltwiseKind::elu: return alpha * (std::exp(x) - 1.0);
    default: return 0.0;
  }
}

std::vector<double> forward(const kb::ActivationFunction<double>& f, const std::vector<double>& x) {
  DoubleView y("y", x.size());
  kb::eltwise_forward<double>(f, device_copy(x), static_cast<int64_t>(x.size()), y);
  return host_copy(y);
}

}  // namespace

TEST_CASE("activation kernels match their formulas and finite differences in double", "[eltwise][kernels][gradient]") {
  const struct {
    EltwiseKind kind;
    double alpha;
    const char* name;
  } cases[] = {{EltwiseKind::relu, 0.0, "relu"},
               {EltwiseKind::leaky_relu, 0.01, "leaky_relu(0.01)"},
               {EltwiseKind::leaky_relu, 0.3, "leaky_relu(0.3)"},
               {EltwiseKind::elu, 1.0, "elu(1)"},
               {EltwiseKind::elu, 0.5, "elu(0.5)"},
               {EltwiseKind::tanh, 0.0, "tanh"},
               {EltwiseKind::scale, 1.2, "scale(1.2)"},
               {EltwiseKind::scale, -0.5, "scale(-0.5)"},
               {EltwiseKind::sigmoid, 0.0, "sigmoid"}};
  for (const auto& c : cases) {
    const kb::ActivationFunction<double> f{c.kind, c.alpha};
    const auto x = inputs_away_from_zero(200, 31u);
    const auto y = forward(f, x);
    double worst_value = 0.0;
    for (size_t i = 0; i < x.size(); ++i)
      worst_value = std::max(worst_value, std::abs(y[i] - reference(c.kind, c.alpha, x[i])));

    // Weights bounded away from 0 keep every gradient well above the rounding error of L.
    const auto r = random_vector<double>(x.size(), 32u, 0.5, 1.5);
    DoubleView dx("dx", x.size());
    kb::eltwise_backward<double>(f, device_copy(x), device_copy(r), static_cast<int64_t>(x.size()), dx);
    const auto check = check_gradient<double>(
        x, host_copy(dx),
        [&](const std::vector<double>& v) {
          const auto fy = forward(f, v);
          double l = 0.0;
          for (size_t i = 0; i < v.size(); ++i) l += fy[i] * r[i];
          return l;
        },
        1e-5, 1e-6);
    std::printf("[tolerance] eltwise kernel %s (double): value error %.3g, dx max_rel_error %.3g (limit 1e-6)\n",
                c.name, worst_value, check.max_rel_error);
    INFO(c.name << ": " << check.str());
    CHECK(worst_value < 1e-14);
    CHECK(check.max_rel_error < 1e-6);
  }
}

TEST_CASE("sigmoid stays finite and exact in both tails", "[eltwise][kernels]") {
  // The naive 1/(1 + exp(−x)) is exact for x ≥ 0 but, for x ≪ 0, exp(−x) overflows in float
  // (x < −88.7) and gives 0 instead of a tiny positive value; the row's form for x < 0 keeps it.
  const kb::ActivationFunction<double> sigmoid{EltwiseKind::sigmoid, 0.0};
  const auto y = forward(sigmoid, {-800.0, -30.0, 0.0, 30.0, 800.0});
  CHECK(y[0] == 0.0);  // exp(−800) underflows in double too: the true value is below the smallest double
  CHECK(y[1] == Approx(9.357622968839299e-14).epsilon(1e-13));  // e^−30/(1 + e^−30)
  CHECK(y[2] == 0.5);
  CHECK(y[3] == Approx(1.0 - 9.357622968839299e-14).epsilon(1e-15));
  CHECK(y[4] == 1.0);
  const kb::ActivationFunction<float> sigmoid_f{EltwiseKind::sigmoid, 0.0f};
  CHECK(sigmoid_f.value(-80.0f) == Approx(1.8048513878454153e-35).epsilon(1e-5));  // 1/(1 + e^80) overflows nothing
  CHECK(sigmoid_f.derivative(-80.0f) == Approx(1.8048513878454153e-35).epsilon(1e-5));
  CHECK(sigmoid_f.value(80.0f) == 1.0f);
}

TEST_CASE("activation derivatives at zero take the left branch", "[eltwise][kernels]") {
  const kb::ActivationFunction<double> relu{EltwiseKind::relu, 0.0}, leaky{EltwiseKind::leaky_relu, 0.1},
      elu{EltwiseKind::elu, 2.0};
  CHECK(relu.derivative(0.0) == 0.0);
  CHECK(leaky.derivative(0.0) == Approx(0.1));
  CHECK(elu.derivative(0.0) == Approx(2.0));
  CHECK(elu.value(0.0) == 0.0);
}

TEST_CASE("the Kokkos eltwise op runs on float tensors and names itself", "[eltwise][kernels]") {
  tessera::ops::EltwiseDesc d;
  d.kind = EltwiseKind::leaky_relu;
  d.alpha = 0.25f;
  CHECK(d.str() == "leaky_relu(alpha=0.25)");
  auto op = kb::make_eltwise(d);
  CHECK(op->backend() == "kokkos");
  tessera::Tensor x(tessera::Shape{2, 2}), y(tessera::Shape{2, 2}), dy(tessera::Shape{2, 2}), dx(tessera::Shape{2, 2});
  x.copy_from_host({-4.0f, -1.0f, 0.5f, 3.0f});
  op->forward(x, y);
  CHECK(y.to_host() == std::vector<float>{-1.0f, -0.25f, 0.5f, 3.0f});
  dy.copy_from_host({1.0f, 2.0f, 3.0f, 4.0f});
  op->backward(x, dy, dx);
  CHECK(dx.to_host() == std::vector<float>{0.25f, 0.5f, 3.0f, 4.0f});
  tessera::Tensor small(tessera::Shape{3});
  CHECK_THROWS_AS(op->forward(x, small), tessera::ShapeError);
}
