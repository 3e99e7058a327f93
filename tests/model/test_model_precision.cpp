// A model run in bf16: which layers take the run's precision, the conversions at the edges
// between bf16 and fp32 layers (including an output read by one layer of each type, whose
// gradients are summed across types), and the result against the same model in fp32.
#include "tessera/build_info.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include "support/gradient_check.hpp"
#include "support/skip.hpp"
#include "tessera/core/error.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/model.hpp"
#include "tessera/model/model_spec.hpp"
#if TESSERA_ENABLE_ONEDNN
#include "tessera/backends/onednn/onednn_backend.hpp"
#endif

using namespace tessera;

namespace {

// r1 feeds c2 (bf16) and the add (kept in fp32 by its spec), so its gradient is the sum of a
// bf16 and a converted fp32 contribution; the pool reads the fp32 add through a conversion.
// Average pooling, not max: a max over values that bf16 rounds to equal ones may pick another
// element than fp32 does and send it the whole gradient, an O(1) local difference that no
// rounding bound describes (the training curves of docs/precision.md cover max pooling).
const nlohmann::json kNet = nlohmann::json::parse(R"({
    "input": {"channels": 3, "size": [6, 6, 6]},
    "layers": [
      {"name": "c1", "type": "conv3d", "filters": 8, "padding": 1},
      {"name": "r1", "type": "leaky_relu", "alpha": 0.1},
      {"name": "c2", "type": "conv3d", "filters": 8, "padding": 1},
      {"name": "sum", "type": "add", "inputs": ["r1", "c2"], "precision": "fp32"},
      {"name": "pool", "type": "avg_pool3d", "kernel": 2},
      {"name": "flat", "type": "flatten"},
      {"name": "out", "type": "dense", "units": 3}
    ]})");

std::unique_ptr<model::Model> build(const nlohmann::json& spec, ElementType precision, const std::string& backend = "auto") {
  ConfigObject cfg(spec, "$.model");
  model::BuildOptions options;
  options.seed = 3;
  options.precision = precision;
  options.backend = backend;
  return model::Model::from_json(cfg, options);
}

/// ‖a − b‖ / ‖b‖.
double norm_error(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    n += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(d / n);
}

/// Why oneDNN cannot run bf16 convolutions here; "" where it can.
std::string onednn_lacks_bf16() {
#if TESSERA_ENABLE_ONEDNN
  return onednn_backend::has_bf16_instructions()
             ? ""
             : "oneDNN dispatches " + onednn_backend::dispatched_isa() + ", without bf16 instructions";
#else
  return "built without oneDNN";
#endif
}

/// The bf16 arithmetic of `backend` against fp32 (on the default backend) through kNet.
void check_bf16_net(const std::string& backend) {
  auto m32 = build(kNet, ElementType::fp32);
  auto m16 = build(kNet, ElementType::bf16, backend);
  const std::string summary = m16->summary();
  INFO(summary);
  CHECK(m16->precision_summary() == "bf16 (5 of 7 layers; the others fp32)");  // c1, r1, c2, pool, out
  CHECK_THAT(summary, Catch::Contains(backend + " bf16"));
  REQUIRE(m16->parameters().values().to_host() == m32->parameters().values().to_host());

  Tensor x(Shape{2, 6, 6, 6, 3});
  x.copy_from_host(testing::random_vector<float>(static_cast<size_t>(x.numel()), 1));
  Tensor dy(m32->output_shape(2));
  dy.copy_from_host(testing::random_vector<float>(static_cast<size_t>(dy.numel()), 2));
  const layers::StepInfo step{layers::Mode::training, 0};
  const auto y32 = m32->forward(x, step).to_host();
  const Tensor& y16 = m16->forward(x, step);
  CHECK(y16.type() == ElementType::fp32);  // the model's output is fp32 whatever its layers ran in
  m32->backward(dy, step);
  m16->backward(dy, step);
  // Each bf16 layer rounds its output once (relative u = 2^-8) and c1, c2 round their weights
  // (u per product); through the five rounding stages on the way to the output, and the same
  // on the way back, the normwise error stays within a few u.
  const double u = unit_roundoff(ElementType::bf16);
  const double output_error = norm_error(y16.to_host(), y32);
  const double grad_error = norm_error(m16->parameters().grads().to_host(), m32->parameters().grads().to_host());
  INFO("output error " << output_error / u << " u, gradient error " << grad_error / u << " u");
  CHECK(output_error < 5 * u);
  CHECK(grad_error < 10 * u);
  CHECK(output_error > 0.0);  // bf16 did run
}

/// A transposed convolution with a bias far from zero in bf16 on `backend` against fp32.
void check_bf16_transposed(const std::string& backend) {
  const nlohmann::json net = nlohmann::json::parse(R"({
    "input": {"channels": 3, "size": [4, 4, 4]},
    "layers": [
      {"name": "c1", "type": "conv3d", "filters": 8, "padding": 1},
      {"name": "up", "type": "conv_transpose3d", "filters": 6, "kernel": 2, "stride": 2},
      {"name": "c2", "type": "conv3d", "filters": 2, "padding": 1},
      {"name": "flat", "type": "flatten"},
      {"name": "out", "type": "dense", "units": 3}
    ]})");
  auto m32 = build(net, ElementType::fp32);
  auto m16 = build(net, ElementType::bf16, backend);
  INFO(m16->summary());
  CHECK(m16->precision_summary() == "bf16 (4 of 5 layers; the others fp32)");  // c1, up, c2, out
  // A bias far from zero, so that its addition into the bf16 output and its gradient count.
  for (auto* m : {m32.get(), m16.get()}) m->parameters().find("up.bias")->value.fill(0.75f);
  Tensor x(Shape{2, 4, 4, 4, 3});
  x.copy_from_host(testing::random_vector<float>(static_cast<size_t>(x.numel()), 4));
  Tensor dy(m32->output_shape(2));
  dy.copy_from_host(testing::random_vector<float>(static_cast<size_t>(dy.numel()), 5));
  const layers::StepInfo step{layers::Mode::training, 0};
  const auto y32 = m32->forward(x, step).to_host();
  const auto y16 = m16->forward(x, step).to_host();
  m32->backward(dy, step);
  m16->backward(dy, step);
  const double u = unit_roundoff(ElementType::bf16);
  const double output_error = norm_error(y16, y32);
  const double grad_error = norm_error(m16->parameters().grads().to_host(), m32->parameters().grads().to_host());
  const double bias_error = norm_error(m16->parameters().find("up.bias")->grad.to_host(),
                                       m32->parameters().find("up.bias")->grad.to_host());
  INFO("output error " << output_error / u << " u, gradient error " << grad_error / u << " u, up.bias gradient "
                       << bias_error / u << " u");
  CHECK(output_error < 5 * u);
  CHECK(grad_error < 10 * u);
  CHECK(bias_error < 10 * u);
  CHECK(output_error > 0.0);
}

}  // namespace

// The Kokkos backend computes bf16 in software (fp32 arithmetic on rounded operands), so these
// run on every CPU; oneDNN's bf16 kernels need the CPU's bf16 instructions.
TEST_CASE("a bf16 model on the Kokkos backend matches fp32 within bf16's rounding, gradients included",
          "[model][precision]") {
  check_bf16_net("kokkos");
}

TEST_CASE("a bf16 model on oneDNN matches fp32 within bf16's rounding, gradients included", "[model][precision]") {
  if (const std::string why = onednn_lacks_bf16(); !why.empty()) TESSERA_SKIP("bf16-cpu", why);
  check_bf16_net("onednn");
}

TEST_CASE("a bf16 transposed convolution on the Kokkos backend matches fp32 within bf16's rounding, bias included",
          "[model][precision]") {
  check_bf16_transposed("kokkos");
}

TEST_CASE("a bf16 transposed convolution on oneDNN matches fp32 within bf16's rounding, bias included",
          "[model][precision]") {
  if (const std::string why = onednn_lacks_bf16(); !why.empty()) TESSERA_SKIP("bf16-cpu", why);
  check_bf16_transposed("onednn");
}

TEST_CASE("a chain of bf16 layers holds its activations in half the bytes", "[model][precision]") {
  const nlohmann::json chain = nlohmann::json::parse(R"({
    "input": {"channels": 4, "size": [8, 8, 8]},
    "layers": [
      {"name": "c1", "type": "conv3d", "filters": 16, "padding": 1},
      {"name": "r1", "type": "relu"},
      {"name": "c2", "type": "conv3d", "filters": 16, "padding": 1},
      {"name": "pool", "type": "max_pool3d", "kernel": 2},
      {"name": "flat", "type": "flatten"},
      {"name": "out", "type": "dense", "units": 2}
    ]})");
  nlohmann::json unfused = chain;
  unfused["fuse_conv_max_pool"] = false;  // every output stored, so that each one's bytes count
  auto m32 = build(unfused, ElementType::fp32);
  auto m16 = build(unfused, ElementType::bf16);
  Tensor x(Shape{2, 8, 8, 8, 4});
  Tensor dy(m32->output_shape(2));
  for (auto* m : {m32.get(), m16.get()}) {
    m->forward(x, {layers::Mode::training, 0});
    m->backward(dy, {layers::Mode::training, 0});
  }
  // Outputs and gradients of c1, r1, c2 and pool are bf16; the fp32 input, the dense layer's
  // and the conversions at the flatten are small beside them.
  const double ratio = static_cast<double>(m16->activation_bytes()) / static_cast<double>(m32->activation_bytes());
  INFO("bf16 / fp32 activation bytes: " << ratio);
  CHECK(ratio < 0.6);
  CHECK(ratio > 0.45);
}

TEST_CASE("precision requests a layer or backend cannot honour are refused with the key", "[model][precision]") {
  nlohmann::json spec = kNet;
  spec["layers"][5]["precision"] = "bf16";
  CHECK_THROWS_WITH(build(spec, ElementType::fp32),
                    Catch::Contains("$.model.layers[5].precision") &&
                        Catch::Contains("layer 'flat' (flatten) computes only in fp32, not bf16"));
  // fp16 convolutions are cuDNN's only: on the CPU a layer asking for one is refused, naming why.
  spec["layers"][5].erase("precision");
  spec["layers"][0]["precision"] = "fp16";
  CHECK_THROWS_WITH(build(spec, ElementType::fp32),
                    Catch::Contains("layer 'c1'") && Catch::Contains("no fp16 convolution in the kokkos backend"));
  spec["layers"][0].erase("precision");
  spec["layers"][6]["precision"] = "half";
  CHECK_THROWS_WITH(build(spec, ElementType::fp32), Catch::Contains("is not one of fp32, bf16, fp16"));
  // A whole run in fp16 on the Kokkos backend is refused at its first convolution.
  CHECK_THROWS_WITH(build(kNet, ElementType::fp16, "kokkos"),
                    Catch::Contains("layer 'c1'") && Catch::Contains("no fp16 convolution in the kokkos backend"));
  // A layer asked for fp32 in a bf16 run stays fp32.
  spec = kNet;
  spec["layers"][0]["precision"] = "fp32";
  CHECK(build(spec, ElementType::bf16)->precision_summary() == "bf16 (4 of 7 layers; the others fp32)");
}

TEST_CASE("the memory check counts a bf16 layer's output at two bytes an element", "[model][precision]") {
  ConfigObject cfg(kNet, "$.model");
  model::BuildOptions options;
  options.precision = ElementType::bf16;
  const model::Graph g = model::build_graph(model::ModelSpec::from_json(cfg), options);  // creates no op
  const model::Footprint f = g.footprint(2);
  REQUIRE(f.nodes[0].layer == "c1");
  CHECK(f.nodes[0].activation_bytes == 2 * 6 * 6 * 6 * 8 * 2);  // bf16
  REQUIRE(f.nodes[3].layer == "sum");
  CHECK(f.nodes[3].activation_bytes == 2 * 6 * 6 * 6 * 8 * 4);  // the add, asked to stay fp32
}
