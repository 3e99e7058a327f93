#include "tessera/bench/bench_config.hpp"

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/model/model_spec.hpp"

namespace tessera::bench {

nlohmann::json benchmark_config(const std::string& file, int64_t size, int64_t batch) {
  nlohmann::json config = read_json_file(file);
  if (!config.is_object() || !config.contains("model") || !config["model"].is_object())
    throw ConfigError(file + ": $.model", "a run config with a \"model\" section is needed");
  if (size > 0) {
    nlohmann::json& input = config["model"]["input"];
    if (!input.is_object() || !input.contains("size"))
      throw ConfigError(file + ": $.model.input.size", "--size needs a model input with a size to replace");
    const size_t dims = input["size"].is_array() ? input["size"].size() : 3;
    input["size"] = std::vector<int64_t>(dims, size);
    if (config.contains("data") && config["data"].is_object() && config["data"].contains("size"))
      config["data"]["size"] = size;
  }
  if (batch > 0) config["training"]["batch_size"] = batch;
  return config;
}

std::string model_name(const nlohmann::json& config, const std::string& file) {
  if (config.contains("name") && config["name"].is_string()) return config["name"].get<std::string>();
  const auto slash = file.find_last_of('/');
  std::string stem = slash == std::string::npos ? file : file.substr(slash + 1);
  return stem.substr(0, stem.find_last_of('.'));
}

int64_t config_batch(const nlohmann::json& config) {
  if (config.contains("training") && config["training"].contains("batch_size") &&
      config["training"]["batch_size"].is_number_integer())
    return config["training"]["batch_size"].get<int64_t>();
  return 8;
}

ElementType config_precision(const nlohmann::json& config) {
  if (!config.contains("training") || !config["training"].contains("precision")) return ElementType::fp32;
  const nlohmann::json& p = config["training"]["precision"];
  if (!p.is_string()) throw ConfigError("$.training.precision", "expected a string (fp32, bf16, fp16, tf32)");
  return model::parse_run_precision(p.get<std::string>(), "$.training.precision").type;
}

}  // namespace tessera::bench
