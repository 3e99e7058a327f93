#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/model/model.hpp"

using namespace tessera;
using nlohmann::json;

namespace {
std::unique_ptr<model::Model> build(const std::string& text) {
  const json spec = json::parse(text);
  ConfigObject cfg(spec, "$.model");
  model::BuildOptions o;
  o.seed = 3;
  return model::Model::from_json(cfg, o);
}
}  // namespace

TEST_CASE("A residual and concatenating DAG builds with the right shapes", "[model][spec]") {
  auto m = build(R"({
    "input": {"channels": 2, "size": [6, 6, 6]},
    "layers": [
      {"name": "stem", "type": "conv3d", "filters": 4, "padding": 1},
      {"name": "a", "type": "conv3d", "filters": 4, "padding": 1},
      {"name": "res", "type": "add", "inputs": ["stem", "a"]},
      {"name": "b", "type": "conv3d", "filters": 3, "kernel": 1, "inputs": "stem"},
      {"name": "cat", "type": "concat", "inputs": ["res", "b", "input"]},
      {"name": "pool", "type": "max_pool3d"},
      {"name": "flat", "type": "flatten"},
      {"name": "head", "type": "dense", "units": 5}
    ]})");
  CHECK(m->output_shape(7) == Shape{7, 5});
  CHECK(m->num_layers() == 8);
  // stem 4·27·2+4, a 4·27·4+4, b 3·4+3, head 5·(3·3·3·9)+5
  CHECK(m->parameters().trainable_count() == (4 * 27 * 2 + 4) + (4 * 27 * 4 + 4) + (3 * 4 + 3) + (5 * 27 * 9 + 5));
  Tensor x(Shape{2, 6, 6, 6, 2});
  x.fill(0.5f);
  const Tensor& y = m->forward(x, {});
  CHECK(y.shape() == Shape{2, 5});
  Tensor dy(y.shape());
  dy.fill(1.0f);
  m->backward(dy, {});
  // A smaller batch reshapes the graph without rebuilding it.
  Tensor x1(Shape{1, 6, 6, 6, 2});
  CHECK(m->forward(x1, {}).shape() == Shape{1, 5});
  CHECK_THROWS_WITH(m->forward(Tensor(Shape{1, 6, 6, 5, 2}), {}), Catch::Contains("[1, 6, 6, 5, 2]"));
}

TEST_CASE("Parameters are initialised from the seed and the parameter name", "[model][spec]") {
  const char* spec = R"({"input": {"channels": 3, "size": [5, 5]},
      "layers": [{"name": "c", "type": "conv2d", "filters": 2}, {"type": "flatten"}, {"name": "d", "type": "dense", "units": 2}]})";
  auto a = build(spec), b = build(spec);
  CHECK(a->parameters().values().to_host() == b->parameters().values().to_host());
  const auto w = a->parameters().find("c.weight")->value.to_host();
  double sq = 0;
  for (float v : w) sq += static_cast<double>(v) * v;
  CHECK(sq / static_cast<double>(w.size()) == Approx(2.0 / 27).epsilon(0.6));  // He: var 2/fan_in
  CHECK(a->parameters().find("c.bias")->value.to_host() == std::vector<float>(2, 0.0f));
}

TEST_CASE("Model spec errors name the JSON path and the problem", "[model][spec]") {
  const std::string input = R"("input": {"channels": 2, "size": [8, 8, 8]}, )";
  auto fails_with = [&](const std::string& layers, const std::string& path, const std::string& text) {
    INFO(layers);
    CHECK_THROWS_WITH(build("{" + input + "\"layers\": [" + layers + "]}"),
                      Catch::Contains(path) && Catch::Contains(text));
  };
  fails_with(R"({"type": "conv3d", "filters": 4, "kernal": 3})", "$.model.layers[0].kernal", "unknown key");
  fails_with(R"({"type": "conv4d", "filters": 4})", "$.model.layers[0].type", "unknown layer type");
  fails_with(R"({"type": "conv3d", "filters": "4"})", "$.model.layers[0].filters", "expected an integer");
  fails_with(R"({"type": "conv3d"})", "$.model.layers[0].filters", "missing");
  fails_with(R"({"type": "conv3d", "filters": 4, "kernel": 9})", "$.model.layers[0]", "conv");
  fails_with(R"({"type": "conv2d", "filters": 4})", "$.model.layers[0]", "[1, 8, 8, 8, 2]");
  fails_with(R"({"type": "relu"}, {"type": "add", "inputs": ["relu0", "nope"]})", "$.model.layers[1].inputs",
             "\"nope\" is not the name of an earlier layer");
  fails_with(R"({"name": "x", "type": "relu"}, {"name": "x", "type": "relu"})", "$.model.layers[1].name", "used twice");
  fails_with(R"({"name": "x", "type": "relu"}, {"type": "relu", "inputs": "input"})", "$.model.layers[0]",
             "used by no later layer");
  fails_with(R"({"type": "add"})", "$.model.layers[0].inputs", "two or more");
  fails_with(R"({"type": "relu"}, {"type": "dense", "units": 3})", "$.model.layers[1]", "flatten");
  fails_with(R"({"type": "relu", "distribution": {"depth": 2}})", "$.model.layers[0].distribution",
             "needs 2 ranks but the job has 1");
  fails_with(R"({"type": "relu", "distribution": {"sample": 2}})", "$.model.layers[0].distribution", "mpirun -np 2");
  fails_with(R"({"type": "relu", "distribution": {"channel": 2}})", "$.model.layers[0].distribution",
             "needs 2 ranks but the job has 1");
  fails_with(R"({"type": "relu", "backend": "fpga"})", "$.model.layers[0].backend", "not compiled into this build");
  CHECK_THROWS_WITH(build(R"({"input": {"channels": 2, "size": [8, 8, 8, 8]}, "layers": [{"type": "relu"}]})"),
                    Catch::Contains("$.model.input.size"));
  CHECK_THROWS_WITH(build(R"({"input": {"channels": 2}, "layers": [], "extra": 1})"),
                    Catch::Contains("$.model.layers") && Catch::Contains("at least one layer"));
  CHECK_THROWS_WITH(build(R"({"input": {"channels": 2}, "layers": [{"type": "relu"}], "extra": 1})"),
                    Catch::Contains("$.model.extra") && Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(build(R"({"input": {"channels": 2}, "layers": [{"type": "relu"}], "halo_overlap": "often"})"),
                    Catch::Contains("$.model.halo_overlap") && Catch::Contains("true, false or \"always\""));
}

TEST_CASE("halo_overlap reads true, false and \"always\"", "[model][spec]") {
  auto mode = [](const std::string& value) {
    const json spec = json::parse(R"({"input": {"channels": 2}, "layers": [{"type": "relu"}])" +
                                  (value.empty() ? "" : ", \"halo_overlap\": " + value) + "}");
    ConfigObject cfg(spec, "$.model");
    return model::ModelSpec::from_json(cfg).halo_overlap;
  };
  CHECK(mode("") == layers::HaloOverlap::where_it_pays);
  CHECK(mode("true") == layers::HaloOverlap::where_it_pays);
  CHECK(mode("false") == layers::HaloOverlap::off);
  CHECK(mode("\"always\"") == layers::HaloOverlap::always);
}

TEST_CASE("An activation before a max pool runs after it, with identical results", "[model][spec]") {
  // The same network written in both orders: the model moves the activation in the first, so
  // both must compute exactly the same outputs and gradients.
  // (The convolution reads the model input, so it would fuse with the pool: not here.)
  const std::string head = R"({"input": {"channels": 2, "size": [6, 6, 6]}, "fuse_conv_max_pool": false, "layers": [
      {"name": "c", "type": "conv3d", "filters": 3, "padding": 1},)";
  const std::string tail = R"(
      {"name": "flat", "type": "flatten"}, {"name": "d", "type": "dense", "units": 2}]})";
  for (const std::string act : {R"("type": "relu")", R"("type": "leaky_relu", "alpha": 0.1)", R"("type": "elu")"}) {
    INFO(act);
    auto moved = build(head + R"({"name": "a", )" + act + R"(}, {"name": "p", "type": "max_pool3d"},)" + tail);
    auto written = build(head + R"({"name": "p", "type": "max_pool3d"}, {"name": "a", )" + act + "}," + tail);
    CHECK(moved->layer(1).name() == "p");
    CHECK(moved->layer(2).name() == "a");
    Tensor x(Shape{2, 6, 6, 6, 2});
    x.copy_from_host(std::vector<float>([] {
      std::vector<float> v(2 * 216 * 2);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7919) % 113) / 56.0f - 1.0f;
      return v;
    }()));
    const auto ya = moved->forward(x, {}).to_host();
    const auto yb = written->forward(x, {}).to_host();
    CHECK(ya == yb);
    Tensor dy(Shape{2, 2});
    dy.copy_from_host({1.0f, -2.0f, 0.5f, 3.0f});
    moved->backward(dy, {});
    written->backward(dy, {});
    CHECK(moved->parameters().grads().to_host() == written->parameters().grads().to_host());
  }
  // An activation whose output is also used elsewhere stays where it is.
  auto kept = build(head + R"({"name": "a", "type": "relu"}, {"name": "p", "type": "max_pool3d"},
      {"name": "q", "type": "max_pool3d", "inputs": "a"}, {"name": "s", "type": "add", "inputs": ["p", "q"]},)" +
                    tail);
  CHECK(kept->layer(1).name() == "a");
}

TEST_CASE("A convolution fuses with the max pool after it where that pays, with the same results", "[model][spec]") {
  // conv2 -> relu -> pool2 becomes conv2+pool2 -> relu: one sample of conv2's output is 4 MB,
  // more than a slab, and conv1's parameter gradients check the fused layer's input gradient.
  // conv3's output (128 KB a sample) stays in cache anyway: conv3 and pool3 stay apart.
  const std::string layers = R"("layers": [
      {"name": "conv1", "type": "conv3d", "filters": 4, "padding": 1},
      {"name": "act1", "type": "relu"},
      {"name": "conv2", "type": "conv3d", "filters": 16, "padding": 1},
      {"name": "act2", "type": "relu"},
      {"name": "pool2", "type": "max_pool3d"},
      {"name": "conv3", "type": "conv3d", "filters": 4, "padding": 1},
      {"name": "pool3", "type": "max_pool3d"},
      {"name": "flat", "type": "flatten"}, {"name": "d", "type": "dense", "units": 2}]})";
  for (const std::string backend : {"kokkos", "auto"}) {
    INFO(backend);
    const std::string input = R"({"input": {"channels": 1, "size": [16, 64, 64]}, "backend": ")" + backend + "\", ";
    auto fused = build(input + layers);
    auto separate = build(input + R"("fuse_conv_max_pool": false, )" + layers);
    REQUIRE(fused->num_layers() == separate->num_layers() - 1);
    CHECK(fused->layer(0).name() == "conv1");
    CHECK(fused->layer(2).name() == "conv2+pool2");
    CHECK(fused->layer(2).type() == "conv3d+max_pool3d");
    CHECK(fused->layer(3).name() == "act2");
    CHECK(fused->layer(4).name() == "conv3");
    CHECK(fused->layer(5).name() == "pool3");
    CHECK(fused->parameters().trainable_count() == separate->parameters().trainable_count());
    const Shape shape{2, 16, 64, 64, 1};
    Tensor x(shape);
    x.copy_from_host(std::vector<float>([&] {
      std::vector<float> v(static_cast<size_t>(shape.numel()));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7919) % 113) / 56.0f - 1.0f;
      return v;
    }()));
    const auto ya = fused->forward(x, {}).to_host();
    const auto yb = separate->forward(x, {}).to_host();
    REQUIRE(ya.size() == yb.size());
    for (size_t i = 0; i < ya.size(); ++i) CHECK(ya[i] == Approx(yb[i]).epsilon(1e-5).margin(1e-5));
    Tensor dy(Shape{2, 2});
    dy.copy_from_host({1.0f, -2.0f, 0.5f, 3.0f});
    fused->backward(dy, {});
    separate->backward(dy, {});
    const auto ga = fused->parameters().grads().to_host(), gb = separate->parameters().grads().to_host();
    REQUIRE(ga.size() == gb.size());
    // Relative to the largest gradient: sums over 2·65536 voxels in another order.
    double largest = 0.0, worst = 0.0;
    for (size_t i = 0; i < ga.size(); ++i) {
      largest = std::max(largest, std::abs(static_cast<double>(gb[i])));
      worst = std::max(worst, std::abs(static_cast<double>(ga[i]) - gb[i]));
    }
    CHECK(worst / largest < 1e-5);  // measured 3.6e-7 (kokkos), 2.1e-6 (onednn)
  }
}
