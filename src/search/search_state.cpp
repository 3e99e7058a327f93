#include "tessera/search/search_state.hpp"

#include <cmath>
#include <limits>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"

namespace tessera::search {
namespace {

// JSON has no infinity: a failed candidate's objectives are written as null.
nlohmann::json objectives_to_json(const Objectives& o) {
  nlohmann::json a = nlohmann::json::array();
  for (const double v : o) a.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json());
  return a;
}

Objectives objectives_from_json(const nlohmann::json& a) {
  Objectives o;
  for (const auto& v : a) o.push_back(v.is_null() ? std::numeric_limits<double>::infinity() : v.get<double>());
  return o;
}

}  // namespace

nlohmann::json SearchState::to_json() const {
  nlohmann::json h = nlohmann::json::array();
  for (const auto& r : history)
    h.push_back({{"id", r.id},
                 {"generation", r.generation},
                 {"genome", r.genome},
                 {"choices", r.choices},
                 {"objectives", objectives_to_json(r.objectives)},
                 {"failed", r.failed},
                 {"config", r.config}});
  return {{"format", "tessera-search-state"},
          {"version", 1},
          {"generation", generation},
          {"seed", seed},
          {"levels", levels},
          {"objectives", objectives},
          {"population", population},
          {"history", h}};
}

SearchState SearchState::from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object() || j.value("format", std::string()) != "tessera-search-state")
    throw ConfigError(file, "not a search state (written by tessera search as search_state.json)");
  SearchState s;
  try {
    s.generation = j.at("generation").get<int64_t>();
    s.seed = j.at("seed").get<uint64_t>();
    s.levels = j.at("levels").get<std::vector<int64_t>>();
    s.objectives = j.at("objectives").get<std::vector<std::string>>();
    s.population = j.at("population").get<std::vector<size_t>>();
    for (const auto& r : j.at("history")) {
      CandidateRecord c;
      c.id = r.at("id").get<std::string>();
      c.generation = r.at("generation").get<int64_t>();
      c.genome = r.at("genome").get<Genome>();
      c.choices = r.at("choices");
      c.objectives = objectives_from_json(r.at("objectives"));
      c.failed = r.at("failed").get<bool>();
      c.config = r.at("config");
      s.history.push_back(std::move(c));
    }
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(file, std::string("a damaged search state: ") + e.what());
  }
  for (const size_t i : s.population)
    if (i >= s.history.size()) throw ConfigError(file, "a damaged search state: the population names no candidate");
  return s;
}

void SearchState::write(const std::string& path) const {
  const std::string text = to_json().dump() + "\n";
  write_text_atomically(path, text);
}

SearchState SearchState::read(const std::string& path) { return from_json(read_json_file(path), path); }

}  // namespace tessera::search
