#pragma once
#include <array>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/error.hpp"

namespace tessera {

/// Strict reader of one JSON object of a configuration. Every accessor checks the type and
/// names the JSON path on error (`$.model.layers[3].kernel: expected an integer, got "3"`);
/// `finish()` rejects keys that nothing read, so a typo never passes silently.
class ConfigObject {
 public:
  ConfigObject(const nlohmann::json& json, std::string path);

  const std::string& path() const { return path_; }
  std::string path_of(const std::string& key) const { return path_ + "." + key; }
  bool has(const std::string& key) const { return json_.contains(key); }
  const nlohmann::json& raw() const { return json_; }

  std::string string(const std::string& key);
  std::string string(const std::string& key, const std::string& fallback);
  /// A string that must be one of `choices`.
  std::string choice(const std::string& key, const std::vector<std::string>& choices, const std::string& fallback);
  int64_t integer(const std::string& key);
  int64_t integer(const std::string& key, int64_t fallback);
  /// An integer in [lo, hi]; the second form for a key that must be given.
  int64_t integer_in(const std::string& key, int64_t lo, int64_t hi, int64_t fallback);
  int64_t integer_in(const std::string& key, int64_t lo, int64_t hi);
  double number(const std::string& key);
  double number(const std::string& key, double fallback);
  double number_in(const std::string& key, double lo, double hi, double fallback);
  bool boolean(const std::string& key, bool fallback);
  std::vector<int64_t> integer_list(const std::string& key);
  std::vector<std::string> string_list(const std::string& key, const std::vector<std::string>& fallback);
  /// A per-dimension size given as one integer for all dimensions or a list of
  /// `spatial_rank` integers; returned as D, H, W with D = `depth_value` in 2D.
  std::array<int64_t, 3> spatial(const std::string& key, int spatial_rank, int64_t fallback, int64_t min_value,
                                 int64_t depth_value);
  ConfigObject object(const std::string& key);
  /// The value under `key` as it is (a key that takes several forms); throws ConfigError when
  /// it is missing.
  const nlohmann::json& value(const std::string& key) { return get(key); }
  /// Each element of an array of objects.
  std::vector<ConfigObject> object_list(const std::string& key);

  /// Throws ConfigError for the first key that no accessor read.
  void finish() const;

 private:
  const nlohmann::json& get(const std::string& key);
  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;

  const nlohmann::json& json_;
  std::string path_;
  std::set<std::string> used_;
};

/// Parses a JSON file; errors name the file and the line/column.
nlohmann::json read_json_file(const std::string& file);

}  // namespace tessera
