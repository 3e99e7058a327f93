#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/element_type.hpp"

namespace tessera::bench {

/// A run config as a benchmark runs it: read from `file`, with the sample size (the model
/// input's and the data's, cubic) and the global batch replaced where `size` or `batch` is
/// positive. Errors name the file, or the flag whose value does not fit the config.
nlohmann::json benchmark_config(const std::string& file, int64_t size, int64_t batch);
/// The model's name: the config's "name", else the file name without its extension.
std::string model_name(const nlohmann::json& config, const std::string& file);
/// The global batch the config trains with ($.training.batch_size, 8 when absent).
int64_t config_batch(const nlohmann::json& config);
/// The type the config's activations compute in ($.training.precision; "tf32", fp32 data with
/// TF32 products, is fp32 here). Throws ConfigError naming the key for an unknown one.
ElementType config_precision(const nlohmann::json& config);

}  // namespace tessera::bench
