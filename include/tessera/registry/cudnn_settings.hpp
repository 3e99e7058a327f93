#pragma once
#include <optional>
#include <string>

#include "tessera/core/config.hpp"

namespace tessera::registry {

/// How the cuDNN backend's convolutions choose their algorithms and math: the run config's
/// "cudnn" section, TF32 from `"precision": "tf32"`, and the command line's overrides. Each
/// field left unset keeps the backend's default (heuristic, deterministic algorithms, FMA math,
/// the weight-gradient route chosen per layer; docs/gpu.md). The settings are applied before the
/// model is built, since each op reads them when it is made.
struct CudnnSettings {
  std::optional<bool> tf32;
  std::optional<std::string> algorithms;       // "heuristic" | "benchmark"
  std::optional<bool> deterministic;
  std::optional<std::string> weight_gradient;  // "chosen" | "channels_last" | "channels_first" | "few_channel_kernel"

  /// Reads {"algorithms", "deterministic", "weight_gradient"}; ConfigError naming the key for
  /// an unknown value or key.
  static CudnnSettings from_json(ConfigObject& section);
  /// `overrides`' fields where set, this one's elsewhere.
  CudnnSettings merged(const CudnnSettings& overrides) const;
  bool any() const { return tf32 || algorithms || deterministic || weight_gradient; }
  /// "tf32, benchmark algorithms": what was asked, for notes.
  std::string str() const;
};

/// Hands `settings` to the cuDNN backend for the ops made from now on. A build without it
/// ignores them and returns a note saying so (empty otherwise): the same run config serves a
/// CPU and a GPU build.
std::string apply_cudnn_settings(const CudnnSettings& settings);
/// apply_cudnn_settings of a run config's "cudnn" section (read strictly: ConfigError naming
/// $.cudnn.KEY) with `overrides` (TF32, the command line's flags) on top.
std::string apply_run_cudnn_settings(const nlohmann::json& run_config, const CudnnSettings& overrides);

}  // namespace tessera::registry
