// Models built in C++ with ModelBuilder against the same models read from JSON: the same spec
// entries, parameters, initial weights, outputs and gradients; errors named as for a config.
#include <catch2/catch.hpp>

#include "support/gradient_check.hpp"
#include "tessera/core/config.hpp"
#include "tessera/model/model_builder.hpp"

using namespace tessera;
using nlohmann::json;
namespace spec = tessera::model::spec;

namespace {

/// The network of examples/cosmoflow_tiny.json, written with the builder.
model::ModelBuilder cosmoflow_tiny() {
  model::ModelBuilder b(4, {16, 16, 16});
  int64_t filters = 16;
  for (const std::string n : {"1", "2", "3"}) {
    b.add("conv" + n, spec::conv3d(filters).kernel(3).padding(1))
        .add("bn" + n, spec::batch_norm())
        .add("act" + n, spec::leaky_relu(0.01))
        .add("pool" + n, spec::max_pool3d(2));
    filters *= 2;
  }
  b.add("flatten", spec::flatten())
      .add("fc1", spec::dense(64))
      .add("act4", spec::leaky_relu(0.01))
      .add("out", spec::dense(4));
  return b;
}

std::unique_ptr<model::Model> from_json(const json& section, uint64_t seed) {
  ConfigObject cfg(section, "$.model");
  model::BuildOptions o;
  o.seed = seed;
  return model::Model::from_json(cfg, o);
}

/// Output and parameter gradients of one training step on a fixed input.
std::pair<std::vector<float>, std::vector<float>> step(model::Model& m, int64_t batch) {
  std::vector<int64_t> dims{batch};
  for (int64_t d : m.sample_shape().dims()) dims.push_back(d);
  Tensor x{Shape(dims)};
  x.copy_from_host(testing::random_vector<float>(static_cast<size_t>(x.numel()), 7));
  const layers::StepInfo info{layers::Mode::training, 0, batch};
  const auto y = m.forward(x, info).to_host();
  Tensor dy(m.output_shape(batch));
  dy.copy_from_host(testing::random_vector<float>(static_cast<size_t>(dy.numel()), 8));
  m.backward(dy, info);
  return {y, m.parameters().grads().to_host()};
}

}  // namespace

TEST_CASE("A model built in C++ equals the same model read from JSON", "[model][builder]") {
  const json config = read_json_file(std::string(TESSERA_SOURCE_DIR) + "/examples/cosmoflow_tiny.json");
  auto from_file = from_json(config.at("model"), 42);
  model::BuildOptions o;
  o.seed = 42;
  auto built = cosmoflow_tiny().build(o);

  CHECK(built->parameters().trainable_count() == 104276);
  CHECK(built->parameters().trainable_count() == from_file->parameters().trainable_count());
  CHECK(built->summary() == from_file->summary());
  CHECK(built->parameters().values().to_host() == from_file->parameters().values().to_host());
  const auto [y_built, g_built] = step(*built, 2);
  const auto [y_file, g_file] = step(*from_file, 2);
  CHECK(y_built == y_file);
  CHECK(g_built == g_file);

  // Another seed gives other weights: the equality above is not that of two default models.
  o.seed = 43;
  CHECK(cosmoflow_tiny().build(o)->parameters().values().to_host() != from_file->parameters().values().to_host());
}

TEST_CASE("The builder writes the JSON entries a config would hold", "[model][builder]") {
  const json expected = json::parse(R"({
    "input": {"channels": 2, "size": [6, 6, 6]}, "init": "uniform_fan_in", "halo_overlap": false,
    "backend": "kokkos", "fuse_conv_max_pool": false,
    "layers": [
      {"name": "stem", "type": "conv3d", "filters": 4, "padding": [1, 1, 1], "bias": false, "backend": "kokkos"},
      {"name": "bn", "type": "batch_norm", "momentum": 0.2, "sync": true},
      {"name": "a", "type": "conv3d", "filters": 4, "padding": 1, "stride": 1, "dilation": 1},
      {"name": "res", "type": "add", "inputs": ["bn", "a"]},
      {"name": "cat", "type": "concat", "inputs": ["res", "input"]},
      {"name": "up", "type": "conv_transpose3d", "filters": 3, "kernel": 2, "stride": 2},
      {"name": "pool", "type": "avg_pool3d", "kernel": [2, 2, 2], "padding": 0},
      {"type": "max_pool3d", "stride": 1, "kernel": 1},
      {"name": "drop", "type": "dropout", "rate": 0.25},
      {"type": "flatten"},
      {"name": "head", "type": "dense", "units": 5, "bias": true},
      {"name": "e", "type": "elu", "alpha": 0.5}
    ]})");
  model::ModelBuilder b(2, {6, 6, 6});
  b.init(layers::InitScheme::uniform_fan_in).halo_overlap(false).backend("kokkos").fuse_conv_max_pool(false);
  b.add("stem", spec::conv3d(4).padding({1, 1, 1}).bias(false).backend("kokkos"))
      .add("bn", spec::batch_norm().momentum(0.2).sync(true))
      .add("a", spec::conv3d(4).padding(1).stride(1).dilation(1))
      .add("res", spec::add({"bn", "a"}))
      .add("cat", spec::concat({"res", "input"}))
      .add("up", spec::conv_transpose3d(3).kernel(2).stride(2))
      .add("pool", spec::avg_pool3d({2, 2, 2}).padding(0))
      .add(spec::max_pool3d(1).stride(1))
      .add("drop", spec::dropout(0.25))
      .add(spec::flatten())
      .add("head", spec::dense(5).bias(true))
      .add("e", spec::elu(0.5));
  CHECK(b.to_json() == expected);

  const model::ModelSpec s = b.spec();
  REQUIRE(s.layers.size() == 12);
  CHECK(s.layers[3].inputs == std::vector<int>{1, 2});
  CHECK(s.layers[4].inputs == std::vector<int>{3, model::LayerSpec::kModelInput});
  CHECK(s.layers[7].name == "max_pool3d7");
  CHECK(s.layers[0].backend == std::optional<std::string>("kokkos"));
  CHECK(s.init == layers::InitScheme::uniform_fan_in);
  CHECK(s.halo_overlap == layers::HaloOverlap::off);
  CHECK_FALSE(s.fuse_conv_max_pool);

  // Same seed, same model as the JSON gives.
  model::BuildOptions o;
  o.seed = 3;
  auto built = b.build(o);
  auto read = from_json(expected, 3);
  CHECK(built->summary() == read->summary());
  CHECK(step(*built, 2) == step(*read, 2));
}

TEST_CASE("Distributions set in C++ reach the spec", "[model][builder]") {
  model::ModelBuilder b(1, {8, 8, 8});
  parallel::Distribution spatial;
  spatial.depth = 2;
  parallel::Distribution samples;
  samples.sample = 2;
  parallel::Distribution filters;  // every axis the JSON knows reaches the spec, filter too
  filters.filter = 2;
  b.distribution(spatial)
      .add("c", spec::conv3d(2).padding(1).distribution(filters))
      .add(spec::flatten())
      .add("out", spec::dense(1).distribution(samples));
  const model::ModelSpec s = b.spec();
  CHECK(s.distribution == std::optional<parallel::Distribution>(spatial));
  CHECK(s.layers[0].distribution == std::optional<parallel::Distribution>(filters));
  CHECK(s.layers[2].distribution == std::optional<parallel::Distribution>(samples));
  CHECK(spec::distribution_json(parallel::Distribution{}) == nlohmann::json{{"sample", 1}});
  // One rank cannot hold a split over two: the graph builder's error, as for a config.
  CHECK_THROWS_WITH(b.build(), Catch::Contains("ModelBuilder.distribution") && Catch::Contains("2 ranks"));
}

TEST_CASE("Builder mistakes are refused like config mistakes, naming the layer's entry", "[model][builder]") {
  CHECK_THROWS_WITH(model::ModelBuilder(1, {4, 4, 4}).add("c", spec::conv3d(0)).build(),
                    Catch::Contains("ModelBuilder.layers[0].filters: expected an integer from 1 to 1048576, got 0"));
  CHECK_THROWS_WITH(model::ModelBuilder(1, {4, 4, 4}).add(spec::relu()).add(spec::add({"relu0", "nope"})).build(),
                    Catch::Contains("ModelBuilder.layers[1].inputs") && Catch::Contains("\"nope\""));
  CHECK_THROWS_WITH(model::ModelBuilder(1, {4, 4, 4}).add(spec::layer("tanhh")).build(),
                    Catch::Contains("unknown layer type \"tanhh\"") && Catch::Contains("conv3d"));
  CHECK_THROWS_WITH(model::ModelBuilder(1, {4, 4, 4}).add(spec::layer("relu").set("alpha", 1)).build(),
                    Catch::Contains("ModelBuilder.layers[0].alpha"));
  CHECK_THROWS_WITH(model::ModelBuilder(1, {4, 4, 4}).add("x", spec::relu()).add("x", spec::relu()).build(),
                    Catch::Contains("used twice"));
  CHECK_THROWS_WITH(model::ModelBuilder(1, {4, 4, 4}).build(), Catch::Contains("at least one layer"));
  CHECK_THROWS_WITH(model::ModelBuilder(1, {4, 4, 4}).add(spec::dense(2)).build(), Catch::Contains("flatten"));
}
