#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/search/non_dominated_sort.hpp"
#include "tessera/search/variation.hpp"

namespace tessera::search {

/// One trained candidate, as the search remembers it.
struct CandidateRecord {
  std::string id;  // "g2c5": generation 2, its 6th candidate
  int64_t generation = 0;
  Genome genome;
  nlohmann::json choices;  // readable, {"conv1.filters": 8, ...}
  Objectives objectives;   // +∞ where training failed or diverged
  bool failed = false;
  nlohmann::json config;  // the run config it was trained with
};

/// A search between two generations: every candidate trained so far and which of them form
/// the population. Saved after every generation as one JSON file written atomically, so a
/// search resumes from its last finished generation and continues as the uninterrupted one
/// (every random draw depends only on the seed and the generation).
struct SearchState {
  int64_t generation = -1;  // the last finished one, −1: none
  uint64_t seed = 0;
  std::vector<int64_t> levels;
  std::vector<std::string> objectives;
  std::vector<CandidateRecord> history;
  std::vector<size_t> population;  // indices into history

  nlohmann::json to_json() const;
  static SearchState from_json(const nlohmann::json& j, const std::string& file);
  void write(const std::string& path) const;
  /// Throws IoError/ConfigError naming `path`.
  static SearchState read(const std::string& path);
};

}  // namespace tessera::search
