// Whole-model gradient check: every parameter gradient of a DAG with convolutions, batch
// norm, pooling, a residual add, a concat and dense layers, against central finite
// differences of L = Σ y·r through the full forward pass.
#include <catch2/catch.hpp>

#include <cstdio>

#include "support/gradient_check.hpp"
#include "tessera/model/model.hpp"

using namespace tessera;

TEST_CASE("Model backward matches finite differences for every parameter", "[model][gradient]") {
  const auto spec = nlohmann::json::parse(R"({
    "input": {"channels": 2, "size": [5, 6, 4]},
    "layers": [
      {"name": "c1", "type": "conv3d", "filters": 3, "padding": 1},
      {"name": "bn", "type": "batch_norm"},
      {"name": "e1", "type": "elu"},
      {"name": "c2", "type": "conv3d", "filters": 3, "padding": 1, "dilation": 1},
      {"name": "res", "type": "add", "inputs": ["e1", "c2"]},
      {"name": "cat", "type": "concat", "inputs": ["res", "input"]},
      {"name": "pool", "type": "avg_pool3d", "kernel": 2},
      {"name": "flat", "type": "flatten"},
      {"name": "fc", "type": "dense", "units": 4},
      {"name": "act", "type": "leaky_relu", "alpha": 0.1},
      {"name": "out", "type": "dense", "units": 2}
    ]})");
  ConfigObject cfg(spec, "$.model");
  model::BuildOptions options;
  options.seed = 5;
  auto m = model::Model::from_json(cfg, options);

  Tensor x(Shape{2, 5, 6, 4, 2});
  x.copy_from_host(testing::random_vector<float>(static_cast<size_t>(x.numel()), 1));
  const Shape out_shape = m->output_shape(2);
  const auto r = testing::random_vector<float>(static_cast<size_t>(out_shape.numel()), 2);
  Tensor dy(out_shape);
  dy.copy_from_host(r);

  auto loss_of = [&](const std::vector<float>& params) {
    m->parameters().values().copy_from_host(params);
    const auto y = m->forward(x, {layers::Mode::training, 0}).to_host();
    double l = 0;
    for (size_t i = 0; i < y.size(); ++i) l += static_cast<double>(y[i]) * r[i];
    return l;
  };
  const auto params = m->parameters().values().to_host();
  loss_of(params);
  m->backward(dy, {layers::Mode::training, 0});
  const auto analytic = m->parameters().grads().to_host();

  const auto check = testing::check_gradient<float>(params, analytic, loss_of, 1e-2, 1e-2);
  std::printf("whole-model gradient (float32, %zu parameters): %s\n", params.size(), check.str().c_str());
  CHECK(check.max_rel_error < 3e-2);
}
