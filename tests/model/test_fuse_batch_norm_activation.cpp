// The pass that fuses a batch norm with the activation after it: on the graph alone (what it
// fuses and what it leaves), and the fused model against the separate layers, forward and
// backward, in fp32 and in bf16.
#include <catch2/catch.hpp>

#include <cmath>

#include "support/activation_blocks.hpp"
#include "support/gradient_check.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/model.hpp"
#include "tessera/model/passes/fuse_batch_norm_activation.hpp"

using namespace tessera;

namespace {

// bn1 → r1 fuses; bn2 feeds both its activation and the add, so it does not; bn3 → a3 fuses
// (leaky_relu with its key); the last activation follows no batch norm.
const char* const kLayers = R"("layers": [
    {"name": "c1", "type": "conv3d", "filters": 6, "padding": 1},
    {"name": "bn1", "type": "batch_norm"},
    {"name": "r1", "type": "relu"},
    {"name": "c2", "type": "conv3d", "filters": 6, "padding": 1},
    {"name": "bn2", "type": "batch_norm"},
    {"name": "r2", "type": "relu"},
    {"name": "sum", "type": "add", "inputs": ["r2", "bn2"]},
    {"name": "bn3", "type": "batch_norm"},
    {"name": "a3", "type": "leaky_relu", "alpha": 0.2},
    {"name": "c3", "type": "conv3d", "filters": 4, "padding": 1},
    {"name": "t", "type": "tanh"},
    {"name": "flat", "type": "flatten"}, {"name": "d", "type": "dense", "units": 3}]})";

nlohmann::json spec(bool fuse) {
  return nlohmann::json::parse(R"({"input": {"channels": 2, "size": [6, 5, 7]}, "fuse_batch_norm_activation": )" +
                               std::string(fuse ? "true" : "false") + ", " + kLayers);
}

/// `json` must outlive the call only: the model keeps nothing of it.
std::unique_ptr<model::Model> build(const nlohmann::json& json, ElementType precision = ElementType::fp32,
                                    const std::string& backend = "auto") {
  ConfigObject cfg(json, "$.model");
  model::BuildOptions options;
  options.seed = 9;
  options.precision = precision;
  options.backend = backend;
  return model::Model::from_json(cfg, options);
}

/// ‖a − b‖ / ‖b‖.
double norm_error(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    n += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(d / n);
}

struct Pass {
  std::vector<float> output, grads;
};

Pass run(model::Model& m, uint32_t seed) {
  const int64_t batch = 3;
  Tensor x(testing::batched(batch, m.sample_shape()));
  x.copy_from_host(testing::random_vector<float>(static_cast<size_t>(x.numel()), seed));
  const layers::StepInfo step{layers::Mode::training, 0, batch};
  Pass p;
  const Tensor& y = m.forward(x, step);
  p.output = y.to_host();
  Tensor dy(y.shape());
  dy.copy_from_host(testing::random_vector<float>(static_cast<size_t>(dy.numel()), seed + 1));
  m.backward(dy, step);
  p.grads = m.parameters().grads().to_host();
  return p;
}

}  // namespace

TEST_CASE("A batch norm fuses with the activation that alone reads it", "[model][passes]") {
  const nlohmann::json fused_spec = spec(true), separate_spec = spec(false);
  ConfigObject cfg(fused_spec, "$.model");
  auto g = model::build_graph(model::ModelSpec::from_json(cfg), {});
  const size_t before = g.nodes.size();
  const auto lines = model::passes::fuse_batch_norm_activation(g);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] ==
        "graph: 'bn1+r1' applies relu in the batch norm's own passes (the activation's input is never stored)");
  CHECK(lines[1] == "graph: 'bn3+a3' applies leaky_relu(alpha=0.2) in the batch norm's own passes (the activation's "
                    "input is never stored)");
  REQUIRE(g.nodes.size() == before - 2);
  CHECK(g.nodes[1].layer->name() == "bn1+r1");
  CHECK(g.nodes[1].layer->type() == "batch_norm+relu");
  CHECK(g.nodes[2].inputs == std::vector<int>{1});  // c2 reads the fused layer
  CHECK(g.nodes[3].layer->name() == "bn2");        // two consumers: left alone
  CHECK(g.nodes[6].layer->name() == "bn3+a3");
  CHECK(g.nodes[7].inputs == std::vector<int>{6});

  ConfigObject off(separate_spec, "$.model");
  auto separate = model::build_graph(model::ModelSpec::from_json(off), {});
  CHECK(model::passes::fuse_batch_norm_activation(separate).empty());
}

TEST_CASE("A fused batch norm and activation equal the two layers, forward and backward, same parameters",
          "[model][passes][batch_norm]") {
  auto fused = build(spec(true)), separate = build(spec(false));
  CHECK(fused->num_layers() == separate->num_layers() - 2);
  CHECK_THAT(fused->summary(), Catch::Contains("bn1+r1"));
  const auto& pa = fused->parameters().all();
  const auto& pb = separate->parameters().all();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) CHECK(pa[i]->name == pb[i]->name);  // checkpoints are unchanged
  REQUIRE(fused->parameters().values().to_host() == separate->parameters().values().to_host());
  const Pass a = run(*fused, 3), b = run(*separate, 3);
  // The same arithmetic but for γ·x̂ + β computed as x·(γ·invstd) + (β − mean·γ·invstd): a
  // rounding or two of fp32 apart.
  INFO("output " << norm_error(a.output, b.output) << ", gradients " << norm_error(a.grads, b.grads));
  CHECK(norm_error(a.output, b.output) < 1e-5);
  CHECK(norm_error(a.grads, b.grads) < 1e-5);
  // The running statistics the fused layer keeps are the batch norm's.
  CHECK(fused->parameters().find("bn1.running_var")->value.to_host() ==
        separate->parameters().find("bn1.running_var")->value.to_host());
}

TEST_CASE("In bf16 a fused batch norm and activation equal the two layers within bf16's rounding",
          "[model][passes][batch_norm][precision]") {
  // The Kokkos backend, which computes bf16 on any CPU.
  auto fused = build(spec(true), ElementType::bf16, "kokkos"), separate = build(spec(false), ElementType::bf16, "kokkos");
  const Pass a = run(*fused, 5), b = run(*separate, 5);
  // The separate layers round the batch norm's output to bf16 before the activation reads it;
  // the fused layer does not: each differs from fp32 by about u = 2^-8, so from each other by a
  // few u.
  const double u = 0x1p-8;
  INFO("output " << norm_error(a.output, b.output) / u << " u, gradients " << norm_error(a.grads, b.grads) / u
                 << " u");
  CHECK(norm_error(a.output, b.output) < 4 * u);
  CHECK(norm_error(a.grads, b.grads) < 8 * u);
}

TEST_CASE("An activation asked to stay fp32 in a bf16 run is not fused into a bf16 batch norm", "[model][passes]") {
  nlohmann::json s = spec(true);
  s["layers"][2]["precision"] = "fp32";
  auto m = build(s, ElementType::bf16, "kokkos");
  CHECK_THAT(m->summary(), !Catch::Contains("bn1+r1"));
  CHECK_THAT(m->summary(), Catch::Contains("bn3+a3"));
}
