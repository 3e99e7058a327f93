#pragma once
// A search space of tiny candidates (4^3 inputs, a few samples, two steps) for tests.
#include <nlohmann/json.hpp>

namespace tessera::testing {

inline nlohmann::json tiny_search_space() {
  return nlohmann::json::parse(R"({
    "base": {
      "model": {"input": {"channels": 2, "size": [4, 4, 4]},
                "layers": [{"name": "c1", "type": "conv3d", "filters": 4, "padding": 1},
                           {"name": "bn1", "type": "batch_norm"},
                           {"name": "a1", "type": "leaky_relu"},
                           {"name": "c2", "type": "conv3d", "filters": 4, "padding": 1},
                           {"name": "a2", "type": "relu"},
                           {"type": "flatten"}, {"name": "out", "type": "dense", "units": 4}]},
      "loss": {"type": "mse"},
      "optimizer": {"type": "adam", "lr": 0.01},
      "data": {"source": "synthetic_fields", "samples": 16, "validation_samples": 8, "size": 4, "channels": 2},
      "training": {"epochs": 1, "batch_size": 4, "seed": 3}
    },
    "blocks": {"c1": {"filters": [2, 4, 8], "activation": ["relu", "elu", "leaky_relu"], "batch_norm": [true, false]},
               "c2": {"filters": [2, 8], "kernel": [1, 3], "present": [true, false]}},
    "optimizer": {"lr": [0.001, 0.01]},
    "objectives": ["validation_loss", "parameters", "introspection"],
    "introspection": {"layer": "a1", "samples": 4},
    "budget": {"generations": 1, "population": 4, "steps": 2, "seed": 7}
  })");
}

}  // namespace tessera::testing
