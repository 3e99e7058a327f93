// Builds a two-layer model from a spec through the installed public headers and runs one
// forward/backward pass; exits non-zero if anything is off.
#include <cstdio>

#include <tessera/model/model.hpp>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const auto spec = nlohmann::json::parse(R"({
    "input": {"channels": 2, "size": [6, 6, 6]},
    "layers": [{"name": "conv", "type": "conv3d", "filters": 3, "padding": 1},
               {"type": "relu"}]})");
  tessera::ConfigObject cfg(spec, "$.model");
  auto model = tessera::model::Model::from_json(cfg, {});
  tessera::Tensor x(tessera::Shape{2, 6, 6, 6, 2});
  x.fill(1.0f);
  const auto& y = model->forward(x, {});
  tessera::Tensor dy(y.shape());
  dy.fill(1.0f);
  model->backward(dy, {});
  const bool ok = y.shape() == tessera::Shape{2, 6, 6, 6, 3} && model->parameters().trainable_count() == 3 * 27 * 2 + 3;
  std::printf("consumer: output %s, %lld parameters: %s\n", y.shape().str().c_str(),
              static_cast<long long>(model->parameters().trainable_count()), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
