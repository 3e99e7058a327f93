// Every numeric key of a run config, found by recording what the config readers read (so a key
// added tomorrow is covered without a new test), fed the values users mistype or push past a
// type: each is refused naming the key (or the layer that holds it), or accepted inside the
// bounds its reader checks. Integers past 64 bits, 2^63 − 1 and 30-digit numbers are refused.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/core/config_key_recorder.hpp"
#include "tessera/core/error.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

/// Run configs that together read most keys: layers with their options, each optimizer and
/// schedule, accumulation, checkpoints, scaling. Synthetic data: nothing to read from disk.
std::vector<json> configs() {
  const json base = json::parse(R"({
    "model": {"input": {"channels": 2, "size": [8, 8, 8]},
      "layers": [
        {"name": "c1", "type": "conv3d", "filters": 4, "kernel": 3, "padding": 1, "stride": 1},
        {"name": "bn", "type": "batch_norm", "momentum": 0.9, "epsilon": 1e-5},
        {"name": "act", "type": "leaky_relu", "alpha": 0.01},
        {"name": "pool", "type": "max_pool3d", "kernel": 2, "stride": 2},
        {"name": "drop", "type": "dropout", "rate": 0.1},
        {"name": "flat", "type": "flatten"},
        {"name": "fc", "type": "dense", "units": 4}]},
    "loss": {"type": "mse"},
    "optimizer": {"type": "lamb", "lr": 0.01, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-6, "weight_decay": 0.01,
                  "lr_scaling": {"reference_batch": 4, "rule": "sqrt"},
                  "schedule": {"type": "step", "step_size": 10, "gamma": 0.5, "warmup_steps": 2}},
    "data": {"source": "synthetic_fields", "samples": 32, "validation_samples": 8, "size": 8, "channels": 2},
    "training": {"epochs": 2, "batch_size": 4, "accumulate": 2, "max_steps": 5, "seed": 3, "log_every": 2,
                 "allreduce_bucket_kb": 64, "checkpoint": {"path": "keys.ckpt", "every_steps": 2}}})");
  json sgd = base;
  sgd["optimizer"] = json::parse(R"({"type": "sgd", "lr": 0.1, "momentum": 0.9, "dampening": 0.1,
                                     "weight_decay": 1e-4, "schedule": {"type": "cosine", "warmup_steps": 2,
                                     "min_lr": 0.001}})");
  json lars = base;
  lars["optimizer"] = json::parse(R"({"type": "lars", "lr": 1.0, "momentum": 0.9, "weight_decay": 1e-4,
                                      "trust_coefficient": 0.01, "epsilon": 1e-9})");
  json adam = base;
  adam["optimizer"] = json::parse(R"({"type": "adam", "lr": 0.001, "beta1": 0.9, "beta2": 0.99, "epsilon": 1e-8,
                                      "weight_decay": 0.0})");
  return {base, sgd, lars, adam};
}

train::RunOverrides quiet() {
  train::RunOverrides o;
  o.progress = false;
  return o;
}

/// The value at a `$.a.b[2].c` path of `root`, or null when the path is not in it (a reader
/// may read a copy it made, or a key with its fallback).
json* locate(json& root, const std::string& path) {
  json* at = &root;
  size_t i = 1;  // past '$'
  while (i < path.size()) {
    if (path[i] == '.') {
      const size_t end = path.find_first_of(".[", i + 1);
      const std::string key = path.substr(i + 1, end - i - 1);
      if (!at->is_object() || !at->contains(key)) return nullptr;
      at = &(*at)[key];
      i = end == std::string::npos ? path.size() : end;
    } else if (path[i] == '[') {
      const size_t end = path.find(']', i);
      const size_t index = std::stoul(path.substr(i + 1, end - i - 1));
      if (!at->is_array() || index >= at->size()) return nullptr;
      at = &(*at)[index];
      i = end + 1;
    } else {
      return nullptr;
    }
  }
  return at;
}

/// "" when the config builds; else the error message (anything but a tessera::Error escapes).
std::string build(const json& config) {
  try {
    train::TrainingRun run(config, quiet());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// What an error about the key must name: the layer for a key under one ("$.model.layers[3]"),
/// the list for an element of one ("$.model.input.size"), else the key itself.
std::string owner_of(const std::string& path) {
  const std::string layers = "$.model.layers[";
  if (path.rfind(layers, 0) == 0) return path.substr(0, path.find(']') + 1);
  if (!path.empty() && path.back() == ']') return path.substr(0, path.rfind('['));
  return path;
}

}  // namespace

TEST_CASE("every numeric config key refuses what no reader may take, naming the key", "[train][numbers][config]") {
  int keys = 0;
  for (const json& config : configs()) {
    REQUIRE(build(config).empty());
    std::vector<NumericKeyRead> reads;
    {
      ConfigKeyRecorder recorder;
      train::TrainingRun run(config, quiet());
      reads = recorder.reads();
    }
    for (const NumericKeyRead& key : reads) {
      json probe = config;
      if (locate(probe, key.path) == nullptr) continue;
      ++keys;
      struct Case {
        json value;
        bool refused;  // must be refused; otherwise refused by name or accepted
      };
      std::vector<Case> cases{{-1, false}, {0, false}, {1e300, !key.integer}, {-1e300, !key.integer}};
      if (key.integer) {
        cases.push_back({INT64_MAX, true});
        cases.push_back({json::parse("123456789012345678901234567890"), true});
        cases.push_back({json::parse("18446744073709551615"), true});
        cases.push_back({2.5, true});
      }
      for (const Case& c : cases) {
        json bad = config;
        *locate(bad, key.path) = c.value;
        const std::string message = build(bad);
        INFO(key.path + " = " + c.value.dump() + ": " + (message.empty() ? "accepted" : message));
        if (c.refused) CHECK_FALSE(message.empty());
        if (!message.empty()) CHECK_THAT(message, Catch::Contains(owner_of(key.path)));
        // Accepted: then the reader's own bounds, where it states them, hold the value.
        if (message.empty() && key.bounded && c.value.is_number_integer())
          CHECK(key.integer_bounds.contains(c.value.get<int64_t>()));
      }
    }
  }
  // The recorder found the keys: if it found few, this would be testing nothing.
  CHECK(keys >= 40);
}

TEST_CASE("every numeric key the readers read is documented in docs/config.md", "[train][numbers][config][docs]") {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/docs/config.md");
  std::stringstream docs;
  docs << in.rdbuf();
  REQUIRE(docs.str().size() > 10000);
  int keys = 0;
  for (const json& config : configs()) {
    ConfigKeyRecorder recorder;
    train::TrainingRun run(config, quiet());
    for (const NumericKeyRead& key : recorder.reads()) {
      // The key's own name: "$.model.layers[0].filters" -> "filters", "$.model.input.size[1]" -> "size".
      std::string name = key.path.substr(0, key.path.back() == ']' ? key.path.rfind('[') : std::string::npos);
      name = name.substr(name.rfind('.') + 1);
      ++keys;
      INFO(key.path);
      // As a key of its table ("`filters`") or under its section ("`checkpoint.every_steps`").
      CHECK((docs.str().find("`" + name + "`") != std::string::npos ||
             docs.str().find("." + name + "`") != std::string::npos));
    }
  }
  CHECK(keys >= 40);
}
