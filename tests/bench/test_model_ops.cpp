#include <catch2/catch.hpp>

#include "tessera/bench/bench_config.hpp"
#include "tessera/bench/model_ops.hpp"
#include "tessera/bench/op_benchmark.hpp"
#include "tessera/build_info.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/registry/backend_registry.hpp"

using namespace tessera;
using namespace tessera::bench;

namespace {
const std::string tiny = std::string(TESSERA_SOURCE_DIR) + "/examples/cosmoflow_tiny.json";
}

TEST_CASE("a benchmark config replaces the sample size and the batch", "[bench]") {
  const auto config = benchmark_config(tiny, 32, 2);
  CHECK(config["model"]["input"]["size"] == nlohmann::json::array({32, 32, 32}));
  CHECK(config_batch(config) == 2);
  CHECK(model_name(config, tiny) == "cosmoflow-tiny");
  CHECK(config_batch(benchmark_config(tiny, 0, 0)) == 16);
  CHECK_THROWS_WITH(benchmark_config("/nonexistent/run.json", 0, 0), Catch::Contains("/nonexistent/run.json"));
}

TEST_CASE("the ops of a model come at its layers' shapes, activations after their pools", "[bench]") {
  const auto config = benchmark_config(tiny, 16, 2);
  const auto cases = model_op_cases(config["model"], 2);
  std::vector<std::string> layers;
  for (const auto& c : cases) layers.push_back(c.layer);
  // The graph pass runs each activation that feeds a max pool after it; flatten copies.
  CHECK(layers == std::vector<std::string>{"conv1", "bn1", "pool1", "act1", "conv2", "bn2", "pool2", "act2", "conv3",
                                           "bn3", "pool3", "act3", "flatten", "fc1", "act4", "out"});
  const OpCase& conv1 = cases[0];
  REQUIRE(conv1.kind == ops::OpKind::conv);
  CHECK(conv1.conv.batch == 2);
  CHECK(conv1.conv.in_channels == 4);
  CHECK(conv1.conv.in_size == std::array<int64_t, 3>{16, 16, 16});
  CHECK(conv1.reads_model_input);
  CHECK_FALSE(cases[4].reads_model_input);
  const OpCase& bn1 = cases[1];
  REQUIRE(bn1.kind == ops::OpKind::batch_norm);
  CHECK(bn1.batch_norm.rows == 2 * 16 * 16 * 16);
  CHECK(bn1.batch_norm.channels == conv1.conv.out_channels);
  const OpCase& act1 = cases[3];
  REQUIRE(act1.kind == ops::OpKind::eltwise);
  CHECK(act1.eltwise_elements == 2 * 8 * 8 * 8 * conv1.conv.out_channels);  // after the 2x2x2 pool
  const OpCase& flatten = cases[12];
  REQUIRE(flatten.runner == CaseRunner::layer);
  CHECK(flatten.layer_type == "flatten");
  CHECK(flatten.output == Shape{2, 2 * 2 * 2 * cases[8].conv.out_channels});
  CHECK(op_classes(flatten) == std::vector<std::string>{"flatten_forward", "flatten_backward"});
  const OpCase& fc1 = cases[13];
  REQUIRE(fc1.kind == ops::OpKind::inner_product);
  CHECK(fc1.runner == CaseRunner::op);
  CHECK(fc1.inner_product.batch == 2);
  CHECK(fc1.inner_product.in_features == 2 * 2 * 2 * cases[8].conv.out_channels);
}

TEST_CASE("a bad model spec is named by its JSON path", "[bench]") {
  auto config = benchmark_config(tiny, 16, 2);
  config["model"]["layers"][0]["kernal"] = 3;
  CHECK_THROWS_WITH(model_op_cases(config["model"], 2), Catch::Contains("$.model.layers[0].kernal"));
}

TEST_CASE("timing an op gives each direction its time and work", "[bench]") {
  ops::ConvGeometry g;
  g.batch = 1;
  g.in_channels = 4;
  g.out_channels = 8;
  g.in_size = {6, 6, 6};
  g.kernel = {3, 3, 3};
  g.padding = {1, 1, 1};
  OpCase c;
  c.layer = "conv";
  c.conv = g;
  const auto timings = time_op_case(c, registry::backend("kokkos"), {1, 3});
  REQUIRE(timings.size() == 3);
  CHECK(timings[0].op_class == "conv_forward");
  CHECK(timings[2].op_class == "conv_backward_weights");
  for (const auto& t : timings) {
    CHECK(t.supported);
    CHECK(t.seconds > 0);
    CHECK(t.flops == g.forward_flops());
    CHECK(t.bytes == 4.0 * (g.input_shape().numel() + g.weight_shape().numel() + g.output_shape().numel()));
  }
#if TESSERA_ENABLE_ONEDNN
  OpCase bn;
  bn.layer = "bn";
  bn.kind = ops::OpKind::batch_norm;
  bn.batch_norm.rows = 64;
  bn.batch_norm.channels = 4;
  const auto declined = time_op_case(bn, registry::backend("onednn"), {1, 3});
  REQUIRE(declined.size() == 2);
  CHECK_FALSE(declined[0].supported);
  CHECK_FALSE(declined[0].why.empty());
#endif
}

namespace {

const OpCase& case_of(const std::vector<OpCase>& cases, const std::string& layer) {
  for (const auto& c : cases)
    if (c.layer == layer) return c;
  FAIL("no case for layer " << layer);
  return cases.front();
}

}  // namespace

TEST_CASE("a U-Net's transposed convolutions and concatenations are listed and timed", "[bench]") {
  const auto config = benchmark_config(std::string(TESSERA_SOURCE_DIR) + "/examples/unet3d_small.json", 8, 1);
  const auto cases = model_op_cases(config["model"], 1);
  // up1 takes the 4^3 decoder block to 8^3: its adjoint convolution maps 8^3 back to 4^3.
  const OpCase& up = case_of(cases, "up1");
  REQUIRE(up.runner == CaseRunner::conv_transpose);
  CHECK(up.conv.in_size == std::array<int64_t, 3>{8, 8, 8});
  CHECK(up.conv.output_shape()[1] == 4);
  CHECK(up.conv.stride == std::array<int64_t, 3>{2, 2, 2});
  const OpCase& skip = case_of(cases, "skip1");
  REQUIRE(skip.runner == CaseRunner::layer);
  REQUIRE(skip.inputs.size() == 2);
  CHECK(skip.output[4] == skip.inputs[0][4] + skip.inputs[1][4]);

  const auto up_times = time_op_case(up, registry::backend("kokkos"), {1, 3});
  REQUIRE(up_times.size() == 3);
  CHECK(up_times[0].op_class == "conv_transpose_forward");
  CHECK(up_times[1].op_class == "conv_transpose_backward_data");
  CHECK(up_times[2].op_class == "conv_transpose_backward_weights");
  for (const auto& t : up_times) {
    CHECK(t.supported);
    CHECK(t.seconds > 0);
    CHECK(t.flops == up.conv.forward_flops());
    CHECK(t.bytes ==
          4.0 * (up.conv.input_shape().numel() + up.conv.weight_shape().numel() + up.conv.output_shape().numel()));
  }
  const auto skip_times = time_op_case(skip, registry::backend("kokkos"), {1, 3});
  REQUIRE(skip_times.size() == 2);
  CHECK(skip_times[0].op_class == "concat_forward");
  CHECK(skip_times[1].op_class == "concat_backward");
  for (const auto& t : skip_times) {
    CHECK(t.supported);
    CHECK(t.seconds > 0);
    CHECK(t.flops == 0);  // a copy
    CHECK(t.bytes == 8.0 * skip.output.numel());
  }
}

TEST_CASE("dropout, add and global pooling are timed as the layers themselves", "[bench]") {
  const nlohmann::json model = {{"input", {{"channels", 2}, {"size", {4, 4}}}},
                                {"layers",
                                 {{{"name", "a"}, {"type", "conv2d"}, {"filters", 4}, {"padding", 1}},
                                  {{"name", "b"}, {"type", "conv2d"}, {"filters", 4}, {"padding", 1}},
                                  {{"name", "sum"}, {"type", "add"}, {"inputs", {"a", "b"}}},
                                  {{"name", "drop"}, {"type", "dropout"}, {"rate", 0.25}},
                                  {{"name", "pool"}, {"type", "global_avg_pool2d"}},
                                  {{"name", "out"}, {"type", "dense"}, {"units", 3}}}}};
  const auto cases = model_op_cases(model, 2);
  for (const std::string name : {"sum", "drop", "pool"}) {
    const OpCase& c = case_of(cases, name);
    REQUIRE(c.runner == CaseRunner::layer);
    const auto times = time_op_case(c, registry::backend("kokkos"), {1, 3});
    REQUIRE(times.size() == 2);
    for (const auto& t : times) {
      CHECK(t.supported);
      CHECK(t.seconds > 0);
      CHECK(t.bytes > 0);
    }
  }
  const auto add_times = time_op_case(case_of(cases, "sum"), registry::backend("kokkos"), {1, 1});
  CHECK(add_times[0].op_class == "add_forward");
  CHECK(add_times[0].flops == 2 * 4 * 4 * 4);  // one addition per output element
  CHECK(add_times[0].bytes == 4.0 * 3 * (2 * 4 * 4 * 4));
  CHECK(op_classes(case_of(cases, "pool")) ==
        std::vector<std::string>{"global_avg_pool_forward", "global_avg_pool_backward"});
  // The first convolution reads the model input: no gradient for it, as in training.
  const OpCase& a = case_of(cases, "a");
  CHECK(a.reads_model_input);
  CHECK(case_of(cases, "sum").input_grads == std::vector<bool>{true, true});
}
