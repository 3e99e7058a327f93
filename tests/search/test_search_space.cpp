#include <catch2/catch.hpp>

#include <filesystem>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/search/nsga2.hpp"
#include "tessera/search/search_space.hpp"

using namespace tessera;
using namespace tessera::search;
using nlohmann::json;

namespace {

json space_json() {
  return json::parse(R"({
    "base": {
      "model": {"input": {"channels": 1, "size": [4, 4, 4]},
                "layers": [{"name": "c1", "type": "conv3d", "filters": 4, "padding": 1},
                           {"name": "bn1", "type": "batch_norm"},
                           {"name": "a1", "type": "leaky_relu", "alpha": 0.1},
                           {"name": "c2", "type": "conv3d", "filters": 4, "padding": 1},
                           {"name": "a2", "type": "relu"},
                           {"type": "flatten"}, {"name": "out", "type": "dense", "units": 4}]},
      "loss": {"type": "mse"},
      "optimizer": {"type": "sgd", "lr": 0.01},
      "data": {"source": "synthetic_fields", "samples": 16, "validation_samples": 4, "size": 4, "channels": 1},
      "training": {"epochs": 2, "batch_size": 4, "seed": 3}
    },
    "blocks": {"c1": {"filters": [2, 8], "kernel": [3, 5], "activation": ["relu", "elu"], "batch_norm": [true, false]},
               "c2": {"present": [true, false], "batch_norm": [false, true]}},
    "optimizer": {"lr": [0.001, 0.1]},
    "budget": {"generations": 1, "population": 4, "steps": 3, "seed": 9}
  })");
}

std::string error_of(const json& j) {
  try {
    SearchSpace s(j, "space.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("A search space reads its genes, budget and objectives", "[search][space]") {
  const SearchSpace s(space_json(), "space.json");
  CHECK(s.levels() == std::vector<int64_t>{2, 2, 2, 2, 2, 2, 2});
  CHECK(s.genes()[0].path == "$.blocks.c1.filters");
  CHECK(s.genes().back().path == "$.optimizer.lr");
  CHECK(s.budget().population == 4);
  CHECK(s.budget().steps == 3);
  CHECK(s.budget().seed == 9);
  CHECK(s.objectives() == std::vector<std::string>{"validation_loss", "parameters"});
}

TEST_CASE("A candidate is the base with its choices applied, a valid run config", "[search][space]") {
  const SearchSpace s(space_json(), "space.json");
  // Genes in order: c1 filters, kernel, activation, batch_norm; c2 batch_norm, present; lr.
  // c1: 8 filters, kernel 5, elu, no batch norm; c2 present with a batch norm; lr 0.1.
  const Candidate c = s.materialise({1, 1, 1, 1, 1, 0, 1});
  REQUIRE(c.invalid.empty());
  const json& layers = c.config["model"]["layers"];
  REQUIRE(layers.size() == 7);
  CHECK(layers[0]["filters"] == 8);
  CHECK(layers[0]["kernel"] == 5);
  CHECK(layers[0]["padding"] == 2);
  CHECK(layers[1] == json{{"name", "a1"}, {"type", "elu"}});  // the alpha of leaky_relu is gone
  CHECK(layers[2]["name"] == "c2");
  CHECK(layers[3] == json{{"name", "c2_bn"}, {"type", "batch_norm"}});
  CHECK(c.config["optimizer"]["lr"] == 0.1);
  CHECK(c.config["training"]["max_steps"] == 3);
  CHECK(c.choices["c1.activation"] == "elu");
  // c2 absent: its conv and activation go, the rest stays.
  const Candidate d = s.materialise({0, 0, 0, 0, 0, 1, 0});
  REQUIRE(d.invalid.empty());
  CHECK(d.config["model"]["layers"].size() == 5);
  CHECK(d.config["model"]["layers"][3]["type"] == "flatten");
  // Ready to train: the base's training section, no search step limit.
  CHECK(s.ready_to_train(c)["training"] == space_json()["base"]["training"]);
}

TEST_CASE("Genomes that differ only in a gene with no effect are the same network", "[search][space]") {
  const SearchSpace s(space_json(), "space.json");
  // c2 absent (gene 5 = 1): its batch-norm gene (4) changes nothing that trains.
  CHECK(s.network_of({0, 0, 0, 0, 0, 1, 0}) == s.network_of({0, 0, 0, 0, 1, 1, 0}));
  // c2 present: the same gene adds a layer.
  CHECK(s.network_of({0, 0, 0, 0, 0, 0, 0}) != s.network_of({0, 0, 0, 0, 1, 0, 0}));
  CHECK(s.network_of({0, 0, 0, 0, 0, 1, 0}) != s.network_of({0, 0, 0, 0, 0, 1, 1}));  // the rate
}

TEST_CASE("A candidate whose model cannot be built is invalid, with the reason", "[search][space]") {
  json j = space_json();
  j["blocks"]["c1"]["filters"] = {2, 0};  // 0 filters cannot be built
  const SearchSpace s(j, "space.json");
  const Candidate bad = s.materialise({1, 0, 0, 0, 0, 0, 0});
  CHECK(bad.invalid.find("filters") != std::string::npos);
  CHECK(s.materialise({0, 0, 0, 0, 0, 0, 0}).invalid.empty());
}

TEST_CASE("Bad search spaces are refused naming the JSON path", "[search][space]") {
  json j = space_json();
  j["blocks"]["c1"]["filters"] = json::array();
  CHECK_THAT(error_of(j), Catch::Contains("$.blocks.c1.filters: an empty choice list"));
  j = space_json();
  j["optimizer"]["lr"] = json::array();
  CHECK_THAT(error_of(j), Catch::Contains("$.optimizer.lr: an empty choice list"));
  j = space_json();
  j["blocks"]["nope"] = {{"filters", {1}}};
  CHECK_THAT(error_of(j), Catch::Contains("$.blocks.nope: names no conv layer"));
  j = space_json();
  j["blocks"]["c1"]["filter"] = {1};
  CHECK_THAT(error_of(j), Catch::Contains("$.blocks.c1.filter: unknown key"));
  j = space_json();
  j["blocks"]["c1"]["activation"] = {"relu", "swish"};
  CHECK_THAT(error_of(j), Catch::Contains("$.blocks.c1.activation: \"swish\" is not a known activation"));
  j = space_json();
  j["budget"]["population"] = 1;
  CHECK_THAT(error_of(j), Catch::Contains("$.budget.population"));
  j = space_json();
  j["objectives"] = {"validation_loss"};
  CHECK_THAT(error_of(j), Catch::Contains("$.objectives: a multi-objective search needs two or more"));
  j = space_json();
  j["budget"]["algorithm"] = "annealing";
  CHECK_THAT(error_of(j), Catch::Contains("$.budget.algorithm"));
  j = space_json();
  j["objectives"] = {"parameters", "validation_loss", "parameters"};
  CHECK_THAT(error_of(j), Catch::Contains("$.objectives[2]: \"parameters\" is named twice"));
  j = space_json();
  j["bogus"] = 1;
  CHECK_THAT(error_of(j), Catch::Contains("$.bogus"));
  j = space_json();
  j.erase("blocks");
  j.erase("optimizer");
  CHECK_THAT(error_of(j), Catch::Contains("declares no choices"));
}

TEST_CASE("Every example search space reads and yields valid candidates", "[search][space]") {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TESSERA_SOURCE_DIR) + "/examples/search")) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path().string());
    const SearchSpace s(read_json_file(entry.path().string()), entry.path().string());
    int valid = 0;
    for (const auto& genome : Nsga2(s.levels(), 1).initial(8)) valid += s.materialise(genome).invalid.empty();
    CHECK(valid > 0);
    ++checked;
  }
  CHECK(checked >= 1);
}
