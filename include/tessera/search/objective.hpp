#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/train/training_run.hpp"

namespace tessera::search {

/// A candidate after its training, as objectives see it.
struct TrainedCandidate {
  train::TrainingRun& run;
  const train::TrainingReport& report;
  const nlohmann::json& config;  // its run config
  std::string backend;
};

/// One objective of the search, minimised. Adding one is a new file with a class like
/// this and a line in make_objective().
class Objective {
 public:
  virtual ~Objective() = default;
  virtual std::string name() const = 0;
  /// Collective over the candidate's trainer group; every rank of it returns the same value.
  virtual double measure(TrainedCandidate& candidate) = 0;
};

/// The objective called `name`; `settings` is the space's "introspection" section. Throws
/// ConfigError naming `path` for an unknown name (listing the known ones) or bad settings.
std::unique_ptr<Objective> make_objective(const std::string& name, const nlohmann::json& settings,
                                          const std::string& path);

/// The names make_objective() knows.
std::vector<std::string> objective_names();

}  // namespace tessera::search
