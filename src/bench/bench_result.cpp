#include "tessera/bench/bench_result.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "tessera/bench/roofline.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"

namespace tessera::bench {
namespace {

double non_negative(ConfigObject& cfg, const std::string& key) {
  const double v = cfg.number(key);
  if (!(v >= 0) || !std::isfinite(v)) throw ConfigError(cfg.path_of(key), "expected a finite number >= 0");
  return v;
}

nlohmann::json op_json(const OpResult& r) {
  const OpTiming& t = r.timing;
  nlohmann::json j = {{"layer", t.layer},       {"op_class", t.op_class},   {"shape", t.shape}, {"backend", t.backend},
                      {"platform", r.platform}, {"supported", t.supported}, {"why", t.why},     {"seconds", t.seconds},
                      {"flops", t.flops},       {"bytes", t.bytes}};
  j["precision"] = element_type_name(t.type);
  j["gflops"] = t.seconds > 0 ? t.flops / t.seconds / 1e9 : 0.0;
  j["gbs"] = t.seconds > 0 ? t.bytes / t.seconds / 1e9 : 0.0;
  j["memory_bound"] = r.memory_bound;
  j["arch_efficiency"] = r.arch_efficiency;
  j["app_efficiency"] = r.app_efficiency;
  return j;
}

OpResult read_op(ConfigObject cfg) {
  OpResult r;
  OpTiming& t = r.timing;
  t.layer = cfg.string("layer");
  t.op_class = cfg.string("op_class");
  t.shape = cfg.string("shape");
  t.backend = cfg.string("backend");
  t.type = *parse_element_type(cfg.choice("precision", {"fp32", "bf16", "fp16"}, "fp32"));
  r.platform = cfg.string("platform");
  t.supported = cfg.boolean("supported", true);
  t.why = cfg.string("why", "");
  t.seconds = non_negative(cfg, "seconds");
  t.flops = non_negative(cfg, "flops");
  t.bytes = non_negative(cfg, "bytes");
  if (t.supported && !(t.seconds > 0)) throw ConfigError(cfg.path_of("seconds"), "a supported op needs a time > 0");
  non_negative(cfg, "gflops");
  non_negative(cfg, "gbs");
  r.memory_bound = cfg.boolean("memory_bound", false);
  r.arch_efficiency = non_negative(cfg, "arch_efficiency");
  r.app_efficiency = non_negative(cfg, "app_efficiency");
  if (r.app_efficiency > 1.0 + 1e-9) throw ConfigError(cfg.path_of("app_efficiency"), "expected at most 1");
  cfg.finish();
  return r;
}

nlohmann::json model_json(const ModelResult& m) {
  return {{"backend", m.backend},
          {"platform", m.platform},
          {"precision", element_type_name(m.precision)},
          {"supported", m.supported},
          {"why", m.why},
          {"steps", m.steps},
          {"step_seconds", m.step_seconds},
          {"samples_per_second", m.samples_per_second},
          {"compute_bound_seconds", m.compute_bound_seconds},
          {"memory_bound_seconds", m.memory_bound_seconds},
          {"communication_seconds", m.communication_seconds},
          {"other_seconds", m.other_seconds},
          {"roofline_seconds", m.roofline_seconds},
          {"arch_efficiency", m.arch_efficiency},
          {"app_efficiency", m.app_efficiency}};
}

ModelResult read_model(ConfigObject cfg) {
  ModelResult m;
  m.backend = cfg.string("backend");
  m.platform = cfg.string("platform");
  m.precision = *parse_element_type(cfg.choice("precision", {"fp32", "bf16", "fp16"}, "fp32"));
  m.supported = cfg.boolean("supported", true);
  m.why = cfg.string("why", "");
  m.steps = cfg.integer_in("steps", 0, int64_t{1} << 40);
  m.step_seconds = non_negative(cfg, "step_seconds");
  if (m.supported && (m.steps < 1 || !(m.step_seconds > 0)))
    throw ConfigError(cfg.path_of("step_seconds"), "a supported model needs timed steps and a step time > 0");
  m.samples_per_second = non_negative(cfg, "samples_per_second");
  m.compute_bound_seconds = non_negative(cfg, "compute_bound_seconds");
  m.memory_bound_seconds = non_negative(cfg, "memory_bound_seconds");
  m.communication_seconds = non_negative(cfg, "communication_seconds");
  m.other_seconds = cfg.number("other_seconds");
  m.roofline_seconds = non_negative(cfg, "roofline_seconds");
  m.arch_efficiency = non_negative(cfg, "arch_efficiency");
  m.app_efficiency = non_negative(cfg, "app_efficiency");
  if (m.app_efficiency > 1.0 + 1e-9) throw ConfigError(cfg.path_of("app_efficiency"), "expected at most 1");
  cfg.finish();
  return m;
}

}  // namespace

nlohmann::json BenchResult::to_json() const {
  nlohmann::json j = {{"format", kFormat},     {"version", kVersion}, {"kind", kind}, {"model", model},
                      {"config", config},      {"batch", batch},      {"size", size}, {"machine", machine.to_json()},
                      {"peak", peak.to_json()}};
  j["ops"] = nlohmann::json::array();
  for (const auto& o : ops) j["ops"].push_back(op_json(o));
  j["models"] = nlohmann::json::array();
  for (const auto& m : models) j["models"].push_back(model_json(m));
  return j;
}

BenchResult BenchResult::from_json(const nlohmann::json& j, const std::string& source) {
  ConfigObject cfg(j, source + ": $");
  BenchResult r;
  if (cfg.string("format") != kFormat)
    throw ConfigError(cfg.path_of("format"), std::string("not a tessera bench result (expected \"") + kFormat + "\")");
  const int64_t version = cfg.integer("version");
  if (version != kVersion)
    throw ConfigError(cfg.path_of("version"), "version " + std::to_string(version) +
                                                  " is not the version this build reads (" + std::to_string(kVersion) +
                                                  ")");
  r.kind = cfg.string("kind");
  if (r.kind != "peak" && r.kind != "ops" && r.kind != "model")
    throw ConfigError(cfg.path_of("kind"), "expected \"peak\", \"ops\" or \"model\", got \"" + r.kind + "\"");
  r.model = cfg.string("model");
  r.config = cfg.string("config");
  // Bounded as the flags that set them are (bench --batch-size, --size).
  r.batch = cfg.integer_in("batch", 0, int64_t{1} << 30);
  r.size = cfg.integer_in("size", 0, int64_t{1} << 20);
  if (r.kind != "peak" && r.model.empty())
    throw ConfigError(cfg.path_of("model"), "an " + r.kind + " result names its model");
  r.machine = MachineDescription::from_json(cfg.object("machine"));
  r.peak = PeakFigures::from_json(cfg.object("peak"));
  for (auto& o : cfg.object_list("ops")) r.ops.push_back(read_op(o));
  for (auto& m : cfg.object_list("models")) r.models.push_back(read_model(m));
  if (r.kind == "ops" && r.ops.empty()) throw ConfigError(cfg.path_of("ops"), "an ops result without ops");
  if (r.kind == "model" && r.models.empty()) throw ConfigError(cfg.path_of("models"), "a model result without models");
  if (r.kind != "ops" && !r.ops.empty()) throw ConfigError(cfg.path_of("ops"), "only an ops result has ops");
  if (r.kind != "model" && !r.models.empty())
    throw ConfigError(cfg.path_of("models"), "only a model result has models");
  cfg.finish();
  return r;
}

BenchResult BenchResult::read(const std::string& file) { return from_json(read_json_file(file), file); }

void BenchResult::write(const std::string& file) const {
  const std::string text = to_json().dump(2) + "\n";
  write_text_atomically(file, text);
}

void derive_op_efficiencies(BenchResult& result) {
  const int64_t threads = result.machine.threads;
  const double gbs = result.peak.gbs(threads);
  // The fastest supported time of each op direction (layer, class, shape, type) over the
  // backends: a bf16 op is compared with bf16 ops only.
  using Key = std::tuple<std::string, std::string, std::string, ElementType>;
  std::map<Key, double> best;
  for (const auto& o : result.ops) {
    if (!o.timing.supported) continue;
    const Key key{o.timing.layer, o.timing.op_class, o.timing.shape, o.timing.type};
    auto it = best.find(key);
    if (it == best.end() || o.timing.seconds < it->second) best[key] = o.timing.seconds;
  }
  for (auto& o : result.ops) {
    const OpTiming& t = o.timing;
    const double gflops = result.peak.gflops(threads, t.type);
    o.memory_bound = memory_bound(t.flops, t.bytes, gflops, gbs);
    if (!t.supported) {
      o.arch_efficiency = o.app_efficiency = 0;
      continue;
    }
    o.arch_efficiency = architectural_efficiency(t.seconds, t.flops, t.bytes, gflops, gbs);
    o.app_efficiency = best.at(Key{t.layer, t.op_class, t.shape, t.type}) / t.seconds;
  }
}

void derive_model_efficiencies(BenchResult& result) {
  std::map<ElementType, double> best;
  for (const auto& m : result.models)
    if (m.supported && (!best.count(m.precision) || m.step_seconds < best[m.precision]))
      best[m.precision] = m.step_seconds;
  for (auto& m : result.models) m.app_efficiency = m.supported ? best.at(m.precision) / m.step_seconds : 0.0;
}

}  // namespace tessera::bench
