#include "tessera/registry/cudnn_settings.hpp"

#include "tessera/build_info.hpp"
#include "tessera/core/error.hpp"
#if TESSERA_ENABLE_CUDNN
#include "tessera/backends/cudnn/cudnn_backend.hpp"
#endif

namespace tessera::registry {

CudnnSettings CudnnSettings::from_json(ConfigObject& section) {
  CudnnSettings s;
  if (section.has("algorithms")) s.algorithms = section.choice("algorithms", {"heuristic", "benchmark"}, "heuristic");
  if (section.has("deterministic")) s.deterministic = section.boolean("deterministic", true);
  if (section.has("weight_gradient"))
    s.weight_gradient = section.choice(
        "weight_gradient", {"chosen", "channels_last", "channels_first", "few_channel_kernel"}, "chosen");
  section.finish();
  return s;
}

CudnnSettings CudnnSettings::merged(const CudnnSettings& o) const {
  CudnnSettings s = *this;
  if (o.tf32) s.tf32 = o.tf32;
  if (o.algorithms) s.algorithms = o.algorithms;
  if (o.deterministic) s.deterministic = o.deterministic;
  if (o.weight_gradient) s.weight_gradient = o.weight_gradient;
  return s;
}

std::string CudnnSettings::str() const {
  std::string s;
  const auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (tf32) add(*tf32 ? "tf32" : "no tf32");
  if (algorithms) add(*algorithms + " algorithms");
  if (deterministic) add(*deterministic ? "deterministic" : "non-deterministic algorithms allowed");
  if (weight_gradient) add("weight gradient " + *weight_gradient);
  return s;
}

std::string apply_cudnn_settings(const CudnnSettings& s) {
#if TESSERA_ENABLE_CUDNN
  cudnn_backend::Options o;
  if (s.tf32) o.tf32 = *s.tf32;
  if (s.algorithms) o.benchmark = *s.algorithms == "benchmark";
  if (s.deterministic) o.deterministic = *s.deterministic;
  using WeightGradient = cudnn_backend::Options::WeightGradient;
  if (s.weight_gradient) {
    const std::string& w = *s.weight_gradient;
    o.weight_gradient = w == "channels_last"        ? WeightGradient::channels_last
                        : w == "channels_first"     ? WeightGradient::channels_first
                        : w == "few_channel_kernel" ? WeightGradient::few_channel_kernel
                                                    : WeightGradient::chosen;
  }
  cudnn_backend::set_options(o);
  return "";
#else
  if (!s.any()) return "";
  return "cuDNN settings (" + s.str() + ") do nothing in this build, which has no cuDNN backend";
#endif
}

std::string apply_run_cudnn_settings(const nlohmann::json& run_config, const CudnnSettings& overrides) {
  CudnnSettings settings;
  if (run_config.contains("cudnn")) {
    ConfigObject section(run_config.at("cudnn"), "$.cudnn");
    settings = CudnnSettings::from_json(section);
  }
  return apply_cudnn_settings(settings.merged(overrides));
}

}  // namespace tessera::registry
