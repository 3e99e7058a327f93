#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::train {

/// The manifest of a population checkpoint: a small JSON file at the checkpoint path that
/// names one ordinary checkpoint per trainer (train/checkpoint.hpp) and holds what the
/// trainers' files do not: the population's size and seed, and each trainer's
/// hyper-parameters. Trainer files carry the step in their names
/// (`<path>.step<S>.trainer<t>`), so the files of the previous manifest stay intact until the
/// new manifest has replaced it atomically: a crash at any moment leaves a manifest whose
/// files are all there and all of its step.
///
///   {"format": "tessera-population", "version": 1, "step": S, "trainers": K, "seed": ...,
///    "hyperparameter_keys": ["lr", ...], "members": [{"file": "...", "hyperparameters": [...]}, ...]}
struct PopulationManifest {
  int64_t step = 0;
  int64_t trainers = 0;
  uint64_t seed = 0;
  std::vector<std::string> hyperparameter_keys;
  std::vector<std::string> files;  // file names, relative to the manifest's directory
  std::vector<std::vector<double>> hyperparameters;

  /// The file trainer `trainer`'s checkpoint of step `step` goes to, for manifest `path`.
  static std::string trainer_file(const std::string& path, int64_t step, int64_t trainer);
  /// `file` (a name in the manifest) as a path beside the manifest `path`.
  static std::string beside(const std::string& path, const std::string& file);
  /// Written atomically.
  void write(const std::string& path) const;
  /// Throws IoError naming the file for a missing, malformed or inconsistent manifest.
  static PopulationManifest read(const std::string& path);
  /// Whether `path` holds a population manifest (and not a single trainer's checkpoint).
  static bool is_manifest(const std::string& path);
};

}  // namespace tessera::train
