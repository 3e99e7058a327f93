#include "tessera/train/ltfb/ltfb_options.hpp"

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

namespace tessera::train {
namespace {

HyperparameterRange read_range(ConfigObject& cfg, const std::string& key) {
  HyperparameterRange r;
  r.key = key;
  r.min = cfg.number("min");
  r.max = cfg.number("max");
  r.log_scale = cfg.choice("scale", {"linear", "log"}, "linear") == "log";
  cfg.finish();
  // Every hyper-parameter an optimizer has (rates, decays, momenta, epsilons) is non-negative.
  if (!std::isfinite(r.min) || r.min < 0.0)
    throw ConfigError(cfg.path_of("min"), "must be a non-negative number, got " + std::to_string(r.min));
  if (!std::isfinite(r.max) || r.max < r.min)
    throw ConfigError(cfg.path(), "the range [" + std::to_string(r.min) + ", " + std::to_string(r.max) +
                                      "] is empty: max must be at least min");
  // The optimizers refuse values above 1e6 (OptionChecks): a range past it would stop a run
  // at the first tournament that draws one.
  if (r.max > 1e6) throw ConfigError(cfg.path_of("max"), "must be at most 1e6, got " + format("%g", r.max));
  if (r.log_scale && r.min <= 0.0)
    throw ConfigError(cfg.path_of("scale"), "a log scale needs min > 0, got min " + std::to_string(r.min));
  return r;
}

}  // namespace

LtfbOptions LtfbOptions::from_json(ConfigObject& cfg, int64_t batch_size, int64_t trainers_override) {
  LtfbOptions o;
  o.trainers = cfg.integer_in("trainers", 1, 1 << 20, 1);
  if (trainers_override > 0) o.trainers = trainers_override;
  o.round_steps = cfg.integer_in("round_steps", 1, int64_t{1} << 40, 10);
  o.start_step = cfg.integer_in("start_step", 0, int64_t{1} << 50, 0);
  o.tournament_samples = cfg.integer_in("tournament_samples", 1, int64_t{1} << 40, batch_size);
  const std::string selection = cfg.choice("selection", {"pairwise", "truncation", "none"}, "pairwise");
  o.selection = selection == "truncation" ? Selection::truncation
                : selection == "none"     ? Selection::none
                                          : Selection::pairwise;
  o.truncation_count = cfg.integer_in("truncation_count", 1, 1 << 20, 1);
  o.higher_is_better = cfg.choice("metric", {"loss", "accuracy"}, "loss") == "accuracy";
  o.perturb = cfg.boolean("perturb", false);
  if (cfg.has("hyperparameters")) {
    auto ranges = cfg.object("hyperparameters");
    for (const auto& item : ranges.raw().items()) {
      auto range = ranges.object(item.key());  // refuses what is not an object, naming the key
      o.hyperparameters.push_back(read_range(range, item.key()));
    }
    ranges.finish();
  }
  cfg.finish();
  if (o.selection == Selection::truncation && 2 * o.truncation_count > o.trainers)
    throw ConfigError(cfg.path_of("truncation_count"),
                      std::to_string(o.truncation_count) + " worst trainers cannot copy as many best ones among " +
                          std::to_string(o.trainers) + " trainers (need 2 × truncation_count <= trainers)");
  if (o.perturb && o.hyperparameters.empty())
    throw ConfigError(cfg.path_of("perturb"), "perturbs the hyper-parameters of \"hyperparameters\", which names none");
  return o;
}

std::string LtfbOptions::selection_name() const {
  switch (selection) {
    case Selection::truncation: return "truncation";
    case Selection::none: return "none";
    case Selection::pairwise: break;
  }
  return "pairwise";
}

}  // namespace tessera::train
