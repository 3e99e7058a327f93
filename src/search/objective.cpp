#include "tessera/search/objective.hpp"

#include "tessera/core/error.hpp"
#include "tessera/search/flops_objective.hpp"
#include "tessera/search/introspection_objective.hpp"
#include "tessera/search/parameter_count_objective.hpp"
#include "tessera/search/step_time_objective.hpp"
#include "tessera/search/validation_loss_objective.hpp"

namespace tessera::search {

std::vector<std::string> objective_names() {
  return {"validation_loss", "parameters", "flops", "step_time", "introspection"};
}

std::unique_ptr<Objective> make_objective(const std::string& name, const nlohmann::json& settings,
                                          const std::string& path) {
  if (name == "validation_loss") return std::make_unique<ValidationLossObjective>();
  if (name == "parameters") return std::make_unique<ParameterCountObjective>();
  if (name == "flops") return std::make_unique<FlopsObjective>();
  if (name == "step_time") return std::make_unique<StepTimeObjective>();
  if (name == "introspection") {
    if (settings.empty())
      throw ConfigError(path, "\"introspection\" needs an \"introspection\" section naming its layer");
    return std::make_unique<IntrospectionObjective>(settings, "$.introspection");
  }
  std::string known;
  for (const auto& n : objective_names()) known += (known.empty() ? "" : ", ") + n;
  throw ConfigError(path, "unknown objective \"" + name + "\" (known: " + known + ")");
}

}  // namespace tessera::search
