// The losses: hand-computed values, gradients against finite differences, the split of a
// batch over ranks, and configuration/shape errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <functional>

#include "support/gradient_check.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/loss.hpp"

using tessera::ConfigError;
using tessera::ConfigObject;
using tessera::Shape;
using tessera::ShapeError;
using tessera::Tensor;
using tessera::layers::Loss;
using tessera::layers::LossSums;
using tessera::testing::check_gradient;
using tessera::testing::random_vector;

namespace {

std::unique_ptr<Loss> make_loss(const std::string& type) {
  nlohmann::json json = {{"type", type}};
  ConfigObject cfg(json, "$.loss");
  auto loss = Loss::from_json(cfg);
  cfg.finish();
  return loss;
}

Tensor tensor(const Shape& shape, const std::vector<float>& values) {
  Tensor t(shape);
  t.copy_from_host(values);
  return t;
}

/// −log softmax(row)[label] in double.
double host_cross_entropy(const float* row, int classes, int label) {
  double m = row[0];
  for (int c = 1; c < classes; ++c) m = std::max<double>(m, row[c]);
  double s = 0.0;
  for (int c = 0; c < classes; ++c) s += std::exp(row[c] - m);
  return std::log(s) + m - row[label];
}

/// Checks evaluate's gradient against finite differences of loss_sum / global_batch.
tessera::testing::GradientCheck check_loss_gradient(Loss& loss, const Shape& shape, const Tensor& target,
                                                    int64_t global_batch, unsigned seed) {
  auto p = random_vector<float>(static_cast<size_t>(shape.numel()), seed, -2.0, 2.0);
  Tensor pred = tensor(shape, p), grad(shape);
  loss.evaluate(pred, target, global_batch, grad);
  return check_gradient<float>(
      p, grad.to_host(),
      [&](const std::vector<float>& v) {
        pred.copy_from_host(v);
        return loss.evaluate(pred, target, global_batch, Tensor()).loss_sum / static_cast<double>(global_batch);
      },
      1e-2, 1e-3);
}

}  // namespace

TEST_CASE("losses are chosen by type and reject unknown ones", "[loss]") {
  CHECK(make_loss("mse")->type() == "mse");
  CHECK(make_loss("softmax_cross_entropy")->type() == "softmax_cross_entropy");
  CHECK(make_loss("sigmoid_cross_entropy")->type() == "sigmoid_cross_entropy");
  CHECK_THROWS_AS(make_loss("hinge"), ConfigError);
  CHECK_THROWS_WITH(make_loss("hinge"), Catch::Contains("$.loss.type") && Catch::Contains("hinge"));
  nlohmann::json missing = nlohmann::json::object();
  ConfigObject cfg(missing, "$.loss");
  CHECK_THROWS_AS(Loss::from_json(cfg), ConfigError);
}

TEST_CASE("mse loss is the per-sample mean of squared errors", "[loss][mse]") {
  auto loss = make_loss("mse");
  CHECK(loss->target_shape(Shape{2, 3}) == Shape{2, 3});
  const Tensor pred = tensor(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor target = tensor(Shape{2, 3}, {0, 0, 3, 4, 5, 3});
  Tensor grad(Shape{2, 3});
  // Sample 0: (1 + 4 + 0)/3; sample 1: (0 + 0 + 9)/3.
  const LossSums s = loss->evaluate(pred, target, 4, grad);
  CHECK(s.loss_sum == Approx(5.0 / 3.0 + 3.0));
  CHECK(s.correct == 0);
  CHECK(s.predictions == 0);
  // ∂/∂p of Σ_samples mean (p − t)², over the global batch of 4: 2(p − t)/3/4.
  const auto g = grad.to_host();
  const std::vector<double> expected{1.0 / 6, 2.0 / 6, 0, 0, 0, 3.0 / 6};
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(expected[i]).margin(1e-7));

  const auto check = check_loss_gradient(*loss, Shape{3, 2, 2, 2, 2},
                                         tensor(Shape{3, 2, 2, 2, 2}, random_vector<float>(48, 3u)), 6, 4u);
  std::printf("[tolerance] mse loss gradient (float): max_rel_error %.3g (limit 2e-2)\n", check.max_rel_error);
  INFO(check.str());
  CHECK(check.max_rel_error < 2e-2);

  CHECK_THROWS_AS(loss->evaluate(pred, tensor(Shape{3, 2}, {0, 0, 0, 0, 0, 0}), 4, grad), ShapeError);
  CHECK_THROWS_AS(loss->evaluate(pred, target, 1, grad), ShapeError);
}

TEST_CASE("softmax cross-entropy per sample", "[loss][cross_entropy]") {
  auto loss = make_loss("softmax_cross_entropy");
  CHECK(loss->target_shape(Shape{4, 3}) == Shape{4});
  const std::vector<float> z{2.0f, 1.0f, 0.0f, 0.5f, 0.5f, 3.0f, -1.0f, 4.0f, 1.0f};
  const Tensor logits = tensor(Shape{3, 3}, z);
  const Tensor labels = tensor(Shape{3}, {0, 2, 0});
  Tensor grad(Shape{3, 3});
  const LossSums s = loss->evaluate(logits, labels, 3, grad);
  const double expected =
      host_cross_entropy(&z[0], 3, 0) + host_cross_entropy(&z[3], 3, 2) + host_cross_entropy(&z[6], 3, 0);
  CHECK(s.loss_sum == Approx(expected));
  CHECK(s.correct == 2);
  CHECK(s.predictions == 3);
  // Each gradient row sums to zero: softmax minus a one-hot.
  const auto g = grad.to_host();
  for (size_t r = 0; r < 3; ++r) CHECK(g[3 * r] + g[3 * r + 1] + g[3 * r + 2] == Approx(0.0).margin(1e-7));

  const auto check = check_loss_gradient(*loss, Shape{4, 5}, tensor(Shape{4}, {0, 4, 2, 2}), 8, 5u);
  std::printf("[tolerance] softmax_cross_entropy loss gradient, per sample (float): max_rel_error %.3g (limit 2e-2)\n",
              check.max_rel_error);
  INFO(check.str());
  CHECK(check.max_rel_error < 2e-2);

  CHECK_THROWS_AS(loss->evaluate(logits, tensor(Shape{3}, {0, 3, 0}), 3, grad), tessera::Error);
  CHECK_THROWS_AS(loss->evaluate(logits, tensor(Shape{3, 3}, z), 3, grad), ShapeError);
}

TEST_CASE("softmax cross-entropy per voxel averages over each sample's voxels", "[loss][cross_entropy]") {
  auto loss = make_loss("softmax_cross_entropy");
  const Shape shape{2, 1, 2, 2, 3};
  CHECK(loss->target_shape(shape) == Shape{2, 1, 2, 2});
  const auto z = random_vector<float>(24, 17u, -3.0, 3.0);
  const std::vector<float> label_values{0, 1, 2, 1, 2, 2, 0, 1};
  const Tensor logits = tensor(shape, z);
  double expected = 0.0;
  for (size_t v = 0; v < 8; ++v) expected += host_cross_entropy(&z[3 * v], 3, static_cast<int>(label_values[v])) / 4.0;
  for (const Shape& label_shape : {Shape{2, 1, 2, 2}, Shape{2, 1, 2, 2, 1}}) {
    const LossSums s = loss->evaluate(logits, tensor(label_shape, label_values), 2, Tensor());
    INFO("labels " << label_shape.str());
    CHECK(s.loss_sum == Approx(expected));
    CHECK(s.predictions == 8);
  }
  CHECK_THROWS_AS(loss->evaluate(logits, tensor(Shape{2, 2, 2, 1}, label_values), 2, Tensor()), ShapeError);

  const auto check = check_loss_gradient(
      *loss, Shape{2, 2, 2, 2, 4}, tensor(Shape{2, 2, 2, 2}, {0, 1, 2, 3, 3, 2, 1, 0, 1, 1, 2, 2, 0, 0, 3, 3}), 4, 18u);
  std::printf("[tolerance] softmax_cross_entropy loss gradient, per voxel (float): max_rel_error %.3g (limit 2e-2)\n",
              check.max_rel_error);
  INFO(check.str());
  CHECK(check.max_rel_error < 2e-2);
}

TEST_CASE("loss sums and gradients of a batch split over ranks add up to the whole batch's", "[loss]") {
  for (const std::string type : {"mse", "softmax_cross_entropy", "sigmoid_cross_entropy"}) {
    auto loss = make_loss(type);
    const Shape whole{4, 2, 2, 3}, half{2, 2, 2, 3};
    const auto z = random_vector<float>(48, 23u);
    std::vector<float> t;
    if (type == "mse") {
      t = random_vector<float>(48, 24u);
    } else if (type == "sigmoid_cross_entropy") {
      t = random_vector<float>(48, 24u, 0.0, 1.0);
    } else {
      for (int i = 0; i < 16; ++i) t.push_back(static_cast<float>(i % 3));
    }
    const Shape t_whole = loss->target_shape(whole), t_half = loss->target_shape(half);
    Tensor g_whole(whole), g0(half), g1(half);
    const LossSums all = loss->evaluate(tensor(whole, z), tensor(t_whole, t), 4, g_whole);
    const size_t tn = t.size() / 2;
    const LossSums s0 = loss->evaluate(tensor(half, {z.begin(), z.begin() + 24}),
                                       tensor(t_half, {t.begin(), t.begin() + static_cast<long>(tn)}), 4, g0);
    const LossSums s1 = loss->evaluate(tensor(half, {z.begin() + 24, z.end()}),
                                       tensor(t_half, {t.begin() + static_cast<long>(tn), t.end()}), 4, g1);
    INFO(type);
    CHECK(s0.loss_sum + s1.loss_sum == Approx(all.loss_sum));
    CHECK(s0.correct + s1.correct == all.correct);
    CHECK(s0.predictions + s1.predictions == all.predictions);
    auto parts = g0.to_host();
    const auto second = g1.to_host();
    parts.insert(parts.end(), second.begin(), second.end());
    const auto full = g_whole.to_host();
    for (size_t i = 0; i < full.size(); ++i) CHECK(parts[i] == Approx(full[i]));
  }
}

TEST_CASE("sigmoid cross-entropy equals PyTorch's BCEWithLogitsLoss and its gradient", "[loss][cross_entropy]") {
  auto loss = make_loss("sigmoid_cross_entropy");
  CHECK(loss->target_shape(Shape{2, 4, 4, 4, 1}) == Shape{2, 4, 4, 4, 1});
  // Reference values from Debian 12's python3-torch 1.13.1, in double:
  //   x = torch.tensor([[2, -1, 0], [30, -30, 0.5]], dtype=torch.float64, requires_grad=True)
  //   t = torch.tensor([[1, 0, 0.25], [0, 1, 1]], dtype=torch.float64)
  //   l = F.binary_cross_entropy_with_logits(x, t, reduction="mean"); l.backward()
  // l = 10.26790231055024, the mean over 6 elements; per-sample means summed over the 2
  // samples give twice that, and over a global batch of 2 the gradient is x.grad itself.
  const Tensor logits = tensor(Shape{2, 3}, {2.0f, -1.0f, 0.0f, 30.0f, -30.0f, 0.5f});
  const Tensor targets = tensor(Shape{2, 3}, {1.0f, 0.0f, 0.25f, 0.0f, 1.0f, 1.0f});
  Tensor grad(Shape{2, 3});
  const LossSums s = loss->evaluate(logits, targets, 2, grad);
  CHECK(s.loss_sum == Approx(2 * 10.26790231055024).epsilon(1e-12));
  const std::vector<double> torch_grad{-0.01986715367035295, 0.04482357022833252, 0.041666666666666664,
                                       0.1666666666666511,   -0.16666666666665106, -0.0629234447996909};
  const auto g = grad.to_host();
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(torch_grad[i]).epsilon(1e-6));
  // On the target's side of 0.5: (2, 1), (−1, 0), (0, 0.25) and (0.5, 1); not (30, 0), (−30, 1).
  CHECK(s.correct == 4);
  CHECK(s.predictions == 6);

  const Shape shape{3, 2, 2, 2, 2};
  const auto check =
      check_loss_gradient(*loss, shape, tensor(shape, random_vector<float>(48, 7u, 0.0, 1.0)), 6, 8u);
  std::printf("[tolerance] sigmoid_cross_entropy loss gradient (float): max_rel_error %.3g (limit 2e-2)\n",
              check.max_rel_error);
  INFO(check.str());
  CHECK(check.max_rel_error < 2e-2);
}

TEST_CASE("sigmoid cross-entropy stays finite for large logits and refuses targets outside [0, 1]",
          "[loss][cross_entropy]") {
  auto loss = make_loss("sigmoid_cross_entropy");
  // A confident wrong answer costs |x|; a confident right one about exp(−|x|); nothing overflows.
  const Tensor logits = tensor(Shape{1, 4}, {100.0f, -100.0f, 100.0f, -100.0f});
  Tensor grad(Shape{1, 4});
  const LossSums s = loss->evaluate(logits, tensor(Shape{1, 4}, {0.0f, 1.0f, 1.0f, 0.0f}), 1, grad);
  CHECK(s.loss_sum == Approx((100.0 + 100.0) / 4).epsilon(1e-12));
  const auto g = grad.to_host();
  CHECK(g[0] == 0.25f);
  CHECK(g[1] == -0.25f);
  CHECK(std::abs(g[2]) < 1e-40f);  // σ(100) − 1 and σ(−100) − 0: e^−100 or less
  CHECK(std::abs(g[3]) < 1e-40f);

  Tensor no_grad;
  CHECK_THROWS_WITH(loss->evaluate(logits, tensor(Shape{1, 4}, {0.0f, 1.5f, -0.1f, 0.5f}), 1, no_grad),
                    Catch::Contains("2 of 4 targets are not in [0, 1]"));
  CHECK_THROWS_WITH(loss->evaluate(logits, tensor(Shape{1, 4}, {0.0f, NAN, 1.0f, 0.5f}), 1, no_grad),
                    Catch::Contains("1 of 4 targets are not in [0, 1]"));
  CHECK_THROWS_AS(loss->evaluate(logits, tensor(Shape{4}, {0, 0, 0, 0}), 1, no_grad), ShapeError);
}
