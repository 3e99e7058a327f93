#include "tessera/core/config.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "tessera/core/checked_number.hpp"
#include "tessera/core/config_key_recorder.hpp"
#include "tessera/core/json_reader.hpp"

namespace tessera {
namespace {
std::string type_of(const nlohmann::json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  return "null";
}

/// A JSON integer of 2^63 or more: nlohmann keeps those unsigned, and get<int64_t> would wrap
/// them negative.
bool past_int64(const nlohmann::json& j) {
  return j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

void note_read(const std::string& path, bool integer, bool bounded, IntegerBounds ints = {}, RealBounds reals = {}) {
  ConfigKeyRecorder::note({path, integer, bounded, ints, reals});
}
}  // namespace

ConfigObject::ConfigObject(const nlohmann::json& json, std::string path) : json_(json), path_(std::move(path)) {
  if (!json_.is_object()) throw ConfigError(path_, "expected an object, got " + type_of(json_));
}

void ConfigObject::fail(const std::string& key, const std::string& problem) const {
  throw ConfigError(path_of(key), problem);
}

const nlohmann::json& ConfigObject::get(const std::string& key) {
  auto it = json_.find(key);
  if (it == json_.end()) fail(key, "required key is missing");
  used_.insert(key);
  return *it;
}

std::string ConfigObject::string(const std::string& key) {
  const auto& j = get(key);
  if (!j.is_string()) fail(key, "expected a string, got " + type_of(j) + " " + json_excerpt(j));
  return j.get<std::string>();
}

std::string ConfigObject::string(const std::string& key, const std::string& fallback) {
  return has(key) ? string(key) : fallback;
}

std::string ConfigObject::choice(const std::string& key, const std::vector<std::string>& choices,
                                 const std::string& fallback) {
  const std::string v = string(key, fallback);
  for (const auto& c : choices)
    if (c == v) return v;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  fail(key, json_excerpt(v) + " is not one of: " + list);
}

int64_t ConfigObject::integer(const std::string& key) {
  const auto& j = get(key);
  if (!j.is_number_integer()) fail(key, "expected an integer, got " + type_of(j) + " " + json_excerpt(j));
  if (past_int64(j)) fail(key, "expected a 64-bit integer, got " + json_excerpt(j));
  note_read(path_of(key), true, false);
  return j.get<int64_t>();
}

int64_t ConfigObject::integer(const std::string& key, int64_t fallback) { return has(key) ? integer(key) : fallback; }

int64_t ConfigObject::integer_in(const std::string& key, int64_t lo, int64_t hi, int64_t fallback) {
  const int64_t v = integer(key, fallback);
  if (has(key)) note_read(path_of(key), true, true, {lo, hi});
  if (const std::string problem = integer_problem(v, {lo, hi}); !problem.empty()) fail(key, problem);
  return v;
}

int64_t ConfigObject::integer_in(const std::string& key, int64_t lo, int64_t hi) {
  const int64_t v = integer(key);
  note_read(path_of(key), true, true, {lo, hi});
  if (const std::string problem = integer_problem(v, {lo, hi}); !problem.empty()) fail(key, problem);
  return v;
}

double ConfigObject::number(const std::string& key) {
  const auto& j = get(key);
  if (!j.is_number()) fail(key, "expected a number, got " + type_of(j) + " " + json_excerpt(j));
  const double v = j.get<double>();
  if (!std::isfinite(v)) fail(key, "expected a finite number, got " + json_excerpt(j));
  note_read(path_of(key), false, false);
  return v;
}

double ConfigObject::number(const std::string& key, double fallback) { return has(key) ? number(key) : fallback; }

double ConfigObject::number_in(const std::string& key, double lo, double hi, double fallback) {
  const double v = number(key, fallback);
  const RealBounds bounds{lo, hi};
  if (has(key)) note_read(path_of(key), false, true, {}, bounds);
  if (const std::string problem = real_problem(v, bounds); !problem.empty()) fail(key, problem);
  return v;
}

bool ConfigObject::boolean(const std::string& key, bool fallback) {
  if (!has(key)) return fallback;
  const auto& j = get(key);
  if (!j.is_boolean()) fail(key, "expected true or false, got " + type_of(j) + " " + json_excerpt(j));
  return j.get<bool>();
}

std::vector<int64_t> ConfigObject::integer_list(const std::string& key) {
  const auto& j = get(key);
  if (!j.is_array()) fail(key, "expected an array of integers, got " + type_of(j));
  std::vector<int64_t> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string path = path_of(key) + "[" + std::to_string(i) + "]";
    if (!j[i].is_number_integer()) throw ConfigError(path, "expected an integer, got " + type_of(j[i]));
    if (past_int64(j[i])) throw ConfigError(path, "expected a 64-bit integer, got " + json_excerpt(j[i]));
    note_read(path, true, false);
    out.push_back(j[i].get<int64_t>());
  }
  return out;
}

std::vector<std::string> ConfigObject::string_list(const std::string& key, const std::vector<std::string>& fallback) {
  if (!has(key)) return fallback;
  const auto& j = get(key);
  if (j.is_string()) return {j.get<std::string>()};
  if (!j.is_array()) fail(key, "expected a string or an array of strings, got " + type_of(j));
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string())
      throw ConfigError(path_of(key) + "[" + std::to_string(i) + "]", "expected a string, got " + type_of(j[i]));
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

std::array<int64_t, 3> ConfigObject::spatial(const std::string& key, int spatial_rank, int64_t fallback,
                                             int64_t min_value, int64_t depth_value) {
  std::vector<int64_t> v;
  if (!has(key)) {
    v.assign(static_cast<size_t>(spatial_rank), fallback);
  } else if (json_.at(key).is_number_integer()) {
    v.assign(static_cast<size_t>(spatial_rank), integer(key));
  } else {
    v = integer_list(key);
    if (v.size() != static_cast<size_t>(spatial_rank))
      fail(key, "expected one integer or a list of " + std::to_string(spatial_rank) + ", got " +
                    std::to_string(v.size()) + " values");
  }
  for (auto x : v)
    if (x < min_value) fail(key, "values must be at least " + std::to_string(min_value) + ", got " + std::to_string(x));
  if (spatial_rank == 2) return {depth_value, v[0], v[1]};
  if (spatial_rank == 3) return {v[0], v[1], v[2]};
  fail(key, "only 2D and 3D layers take spatial sizes");
}

ConfigObject ConfigObject::object(const std::string& key) { return ConfigObject(get(key), path_of(key)); }

std::vector<ConfigObject> ConfigObject::object_list(const std::string& key) {
  const auto& j = get(key);
  if (!j.is_array()) fail(key, "expected an array of objects, got " + type_of(j));
  std::vector<ConfigObject> out;
  for (size_t i = 0; i < j.size(); ++i) out.emplace_back(j[i], path_of(key) + "[" + std::to_string(i) + "]");
  return out;
}

void ConfigObject::finish() const {
  for (auto it = json_.begin(); it != json_.end(); ++it) {
    if (used_.count(it.key())) continue;
    std::string known;
    for (const auto& k : used_) known += (known.empty() ? "" : ", ") + k;
    throw ConfigError(path_of(it.key()),
                      "unknown key" + (known.empty() ? std::string() : " (read here: " + known + ")"));
  }
}

nlohmann::json read_json_file(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw IoError(file + ": cannot open the file for reading");
  return parse_json_stream(in, file);
}

}  // namespace tessera
