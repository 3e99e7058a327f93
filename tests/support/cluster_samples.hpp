#pragma once
// A classification task that a BCPNN layer separates without labels: 4x4 binary images that
// are one of two prototypes (the top half lit, or every other column lit) with a tenth of
// their pixels flipped, and the prototype as the class. Written as an HDF5 data file.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/hdf5_files.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::testing {

/// Writes `path` with `n` samples: inputs [n, 1, 4, 4, 1] float32 in {0, 1}, targets [n]
/// float32 class indices 0 or 1, drawn from `seed`.
inline void write_two_cluster_file(const std::string& path, int64_t n, uint64_t seed) {
  constexpr int64_t kPixels = 16;
  std::vector<float> inputs, classes;
  for (int64_t s = 0; s < n; ++s) {
    const int c = rng::uniform(seed, 1, static_cast<uint64_t>(s)) < 0.5f ? 0 : 1;
    classes.push_back(static_cast<float>(c));
    for (int64_t p = 0; p < kPixels; ++p) {
      const bool on = c == 0 ? p < kPixels / 2 : p % 2 == 0;
      const bool flip = rng::uniform(seed, 2, static_cast<uint64_t>(s * kPixels + p)) < 0.1f;
      inputs.push_back(on != flip ? 1.0f : 0.0f);
    }
  }
  const hid_t file = create_file(path);
  write_dataset(file, "inputs", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {static_cast<hsize_t>(n), 1, 4, 4, 1},
                inputs.data());
  write_dataset(file, "targets", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {static_cast<hsize_t>(n)}, classes.data());
  H5Fclose(file);
}

/// A run config of a bcpnn layer and a dense read-out on two-cluster files `train` and
/// `validation`: `local_epochs` local-learning epochs of `epochs`, batch 8, SGD.
inline nlohmann::json two_cluster_bcpnn_config(const std::string& train, const std::string& validation,
                                               int64_t local_epochs, int64_t epochs) {
  nlohmann::json c = nlohmann::json::parse(R"({
    "model": {"input": {"channels": 1, "size": [4, 4]},
              "layers": [{"name": "b", "type": "bcpnn", "hypercolumns": 2, "minicolumns": 2, "density": 0.5,
                          "trace_rate": 0.05, "init_noise": 0.3, "rewire_every": 3, "rewire_swaps": 2},
                         {"name": "readout", "type": "dense", "units": 2}]},
    "loss": {"type": "softmax_cross_entropy"},
    "optimizer": {"type": "sgd", "lr": 0.5, "momentum": 0.9},
    "training": {"batch_size": 8, "seed": 3, "log_every": 1}})");
  c["data"] = {{"source", "hdf5"}, {"files", train}, {"validation", {{"files", validation}}}};
  c["local_learning"] = {{"epochs", local_epochs}};
  c["training"]["epochs"] = epochs;
  return c;
}

}  // namespace tessera::testing
