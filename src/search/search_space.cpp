#include "tessera/search/search_space.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_reader.hpp"
#include "tessera/layers/loss.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/optim/optimizer_section.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::search {
namespace {

const std::set<std::string> kActivations{"relu", "leaky_relu", "elu"};

bool is_activation(const nlohmann::json& layer) {
  return layer.is_object() && layer.contains("type") && layer["type"].is_string() &&
         kActivations.count(layer["type"].get<std::string>()) > 0;
}

bool is_type(const nlohmann::json& layer, const std::string& type) {
  return layer.is_object() && layer.value("type", std::string()) == type;
}

/// Index of the layer named `name` in `layers`, −1: none.
int64_t find_layer(const nlohmann::json& layers, const std::string& name) {
  for (size_t i = 0; i < layers.size(); ++i)
    if (layers[i].is_object() && layers[i].value("name", std::string()) == name) return static_cast<int64_t>(i);
  return -1;
}

/// Removes every "distribution" key: a candidate is validated on one rank; whether it splits
/// over its trainer's ranks is for the trainer to find out.
void strip_distributions(nlohmann::json& model) {
  model.erase("distribution");
  if (model.contains("layers") && model["layers"].is_array())
    for (auto& layer : model["layers"])
      if (layer.is_object()) layer.erase("distribution");
}

const std::vector<std::string> kBlockKeys{"filters", "kernel", "activation", "batch_norm", "present"};

/// What a choice of a block's `key` must be, for its error message; "" when `c` is one.
std::string block_choice_problem(const std::string& key, const nlohmann::json& c) {
  if (key == "activation")
    return c.is_string() && kActivations.count(c.get<std::string>()) ? "" : "known activation (relu, leaky_relu, elu)";
  if (key == "batch_norm" || key == "present") return c.is_boolean() ? "" : "boolean";
  return c.is_number_integer() ? "" : "integer";
}

/// A choice list at `path`: an array of one or more choices.
const nlohmann::json& choice_list(const nlohmann::json& list, const std::string& path) {
  if (!list.is_array()) throw ConfigError(path, "expected a list of choices");
  if (list.empty()) throw ConfigError(path, "an empty choice list: give at least one choice");
  return list;
}

/// The genes of the block `name` (a conv layer of `layers`): one per key it declares.
void add_block_genes(ConfigObject& block, const std::string& name, const std::string& path,
                     const nlohmann::json& layers, std::vector<Gene>& genes) {
  const int64_t at = find_layer(layers, name);
  if (at < 0 ||
      !(is_type(layers[static_cast<size_t>(at)], "conv3d") || is_type(layers[static_cast<size_t>(at)], "conv2d")))
    throw ConfigError(path, "names no conv layer of $.base.model.layers");
  for (const std::string& key : kBlockKeys) {
    if (!block.has(key)) continue;
    const std::string key_path = block.path_of(key);
    const nlohmann::json& list = choice_list(block.raw().at(key), key_path);
    for (const auto& c : list)
      if (const std::string expected = block_choice_problem(key, c); !expected.empty())
        throw ConfigError(key_path, json_excerpt(c) + " is not a " + expected);
    genes.push_back({key_path, name, key, list.get<nlohmann::json::array_t>()});
  }
  for (const auto& [k, v] : block.raw().items())
    if (std::find(kBlockKeys.begin(), kBlockKeys.end(), k) == kBlockKeys.end())
      throw ConfigError(block.path_of(k), "unknown key (known: filters, kernel, activation, batch_norm, present)");
}

/// The genes of the "optimizer" section: one per key, each a list of numbers.
void add_optimizer_genes(ConfigObject& opt, std::vector<Gene>& genes) {
  for (const auto& [key, value] : opt.raw().items()) {
    const std::string path = opt.path_of(key);
    const nlohmann::json& list = choice_list(value, path);
    for (const auto& c : list)
      if (!c.is_number()) throw ConfigError(path, json_excerpt(c) + " is not a number");
    genes.push_back({path, "", key, list.get<nlohmann::json::array_t>()});
  }
}

/// The "budget" section, every key optional.
SearchBudget read_budget(ConfigObject& root) {
  const nlohmann::json no_budget = nlohmann::json::object();
  ConfigObject budget = root.has("budget") ? root.object("budget") : ConfigObject(no_budget, "$.budget");
  SearchBudget b;
  b.generations = budget.integer_in("generations", 0, 1000000, b.generations);
  b.population = budget.integer_in("population", 2, 1000000, b.population);
  b.steps = budget.integer_in("steps", 1, 1000000000, b.steps);
  b.trainers = budget.integer_in("trainers", 0, 1000000, b.trainers);
  b.ranks_per_candidate = budget.integer_in("ranks_per_candidate", 1, 1000000, b.ranks_per_candidate);
  b.seed = static_cast<uint64_t>(budget.integer_in("seed", 0, int64_t{1} << 62, 0));
  b.max_resamples = budget.integer_in("max_resamples", 1, 1000000, b.max_resamples);
  b.algorithm = budget.choice("algorithm", {"nsga2", "random"}, b.algorithm);
  budget.finish();
  return b;
}

/// The "objectives": two or more, none named twice.
std::vector<std::string> read_objectives(ConfigObject& root) {
  std::vector<std::string> objectives = root.string_list("objectives", {"validation_loss", "parameters"});
  if (objectives.size() < 2) throw ConfigError("$.objectives", "a multi-objective search needs two or more objectives");
  for (size_t k = 1; k < objectives.size(); ++k)
    if (std::find(objectives.begin(), objectives.begin() + static_cast<std::ptrdiff_t>(k), objectives[k]) !=
        objectives.begin() + static_cast<std::ptrdiff_t>(k))
      throw ConfigError("$.objectives[" + std::to_string(k) + "]", "\"" + objectives[k] + "\" is named twice");
  return objectives;
}

/// One block's decisions under a genome: presence and batch norm change the layer list.
struct BlockChoice {
  std::optional<int64_t> filters, kernel;
  std::optional<std::string> activation;
  std::optional<bool> batch_norm, present;

  void set(const std::string& key, const nlohmann::json& c) {
    if (key == "filters") filters = c.get<int64_t>();
    if (key == "kernel") kernel = c.get<int64_t>();
    if (key == "activation") activation = c.get<std::string>();
    if (key == "batch_norm") batch_norm = c.get<bool>();
    if (key == "present") present = c.get<bool>();
  }
};

/// The activation of block `name` replaced (keeping its layer's name) or, where it has none,
/// added after the block (which ends at `end`).
void set_activation(nlohmann::json& layers, const std::string& name, std::optional<size_t> act, size_t end,
                    const std::string& type) {
  nlohmann::json a{{"type", type}};
  if (act) {
    if (layers[*act].contains("name")) a["name"] = layers[*act]["name"];
    layers[*act] = a;
  } else {
    a["name"] = name + "_act";
    layers.insert(layers.begin() + static_cast<std::ptrdiff_t>(end), a);
  }
}

/// Applies block `name`'s decisions to `layers`: the block is its conv layer with the batch
/// norm and activation right after it.
void apply_block(nlohmann::json& layers, const std::string& name, const BlockChoice& b) {
  const auto at = static_cast<size_t>(find_layer(layers, name));
  size_t end = at + 1;
  std::optional<size_t> bn, act;
  while (end < layers.size() && (is_type(layers[end], "batch_norm") || is_activation(layers[end]))) {
    if (is_type(layers[end], "batch_norm") && !bn) bn = end;
    if (is_activation(layers[end]) && !act) act = end;
    ++end;
  }
  if (b.present && !*b.present) {
    layers.erase(layers.begin() + static_cast<std::ptrdiff_t>(at), layers.begin() + static_cast<std::ptrdiff_t>(end));
    return;
  }
  nlohmann::json& conv = layers[at];
  if (b.filters) conv["filters"] = *b.filters;
  if (b.kernel) {
    conv["kernel"] = *b.kernel;
    conv["padding"] = *b.kernel / 2;  // keeps the size for odd kernels
  }
  if (b.activation) set_activation(layers, name, act, end, *b.activation);
  if (b.batch_norm) {
    if (!*b.batch_norm && bn)
      layers.erase(layers.begin() + static_cast<std::ptrdiff_t>(*bn));
    else if (*b.batch_norm && !bn)
      layers.insert(layers.begin() + static_cast<std::ptrdiff_t>(at + 1),
                    nlohmann::json{{"name", name + "_bn"}, {"type", "batch_norm"}});
  }
}

}  // namespace

SearchSpace::SearchSpace(const nlohmann::json& space, const std::string& file) : file_(file) {
  ConfigObject root(space, "$");
  root.string("name", "");
  root.string("description", "");
  ConfigObject base = root.object("base");
  base_ = base.raw();
  if (!base_.contains("model") || !base_["model"].is_object())
    throw ConfigError("$.base.model", "the base run config needs a model section");
  if (!base_["model"].contains("layers") || !base_["model"]["layers"].is_array())
    throw ConfigError("$.base.model.layers", "expected an array of layers");
  if (root.has("blocks")) {
    ConfigObject blocks = root.object("blocks");
    for (const auto& [name, value] : blocks.raw().items()) {
      ConfigObject block = blocks.object(name);
      add_block_genes(block, name, blocks.path_of(name), base_["model"]["layers"], genes_);
    }
  }
  if (root.has("optimizer")) {
    ConfigObject opt = root.object("optimizer");
    add_optimizer_genes(opt, genes_);
  }
  if (genes_.empty()) throw ConfigError("$", "the space declares no choices (\"blocks\" or \"optimizer\")");
  budget_ = read_budget(root);
  objectives_ = read_objectives(root);
  introspection_ = root.has("introspection") ? root.raw().at("introspection") : nlohmann::json::object();
  if (root.has("introspection")) root.object("introspection");  // read by its objective, strictly
  root.finish();
}

std::vector<int64_t> SearchSpace::levels() const {
  std::vector<int64_t> l;
  for (const auto& g : genes_) l.push_back(static_cast<int64_t>(g.choices.size()));
  return l;
}

nlohmann::json SearchSpace::apply(const Genome& genome, nlohmann::json& choices) const {
  nlohmann::json config = base_;
  choices = nlohmann::json::object();
  // Gather each block's decisions first: presence and batch norm change the layer list.
  std::map<std::string, BlockChoice> blocks;
  std::vector<std::string> order;
  for (size_t g = 0; g < genes_.size(); ++g) {
    const Gene& gene = genes_[g];
    const nlohmann::json& c = gene.choices.at(static_cast<size_t>(genome.at(g)));
    if (gene.block.empty()) {
      choices[gene.key] = c;
      config["optimizer"][gene.key] = c;
      continue;
    }
    choices[gene.block + "." + gene.key] = c;
    if (!blocks.count(gene.block)) order.push_back(gene.block);
    blocks[gene.block].set(gene.key, c);
  }
  for (const std::string& name : order) apply_block(config["model"]["layers"], name, blocks[name]);
  return config;
}

Candidate SearchSpace::materialise(const Genome& genome) const {
  Candidate c;
  c.genome = genome;
  c.config = apply(genome, c.choices);
  nlohmann::json& training = c.config["training"];
  if (training.is_null()) training = nlohmann::json::object();
  training["max_steps"] = budget_.steps;
  // Enough epochs for the steps: every epoch has at least one.
  training["epochs"] = std::max<int64_t>(training.value("epochs", int64_t{1}), budget_.steps);
  try {
    nlohmann::json model = c.config.at("model");
    strip_distributions(model);
    ConfigObject model_cfg(model, "$.model");
    model::BuildOptions build;
    build.group = parallel::Communicator::self();
    model::build_graph(model::ModelSpec::from_json(model_cfg), build);
    const nlohmann::json optimizer = c.config.value("optimizer", nlohmann::json::object());
    optim::OptimizerSection(optimizer).make_optimizer();
    const nlohmann::json loss = c.config.value("loss", nlohmann::json::object());
    ConfigObject loss_cfg(loss, "$.loss");
    layers::Loss::from_json(loss_cfg);
    loss_cfg.finish();
    ConfigObject training_cfg(training, "$.training");
    train::TrainingOptions::from_json(training_cfg);
    // The introspection objective measures a named layer, which a choice may remove.
    const bool introspects = std::find(objectives_.begin(), objectives_.end(), "introspection") != objectives_.end();
    if (introspects && introspection_.contains("layer") && introspection_["layer"].is_string()) {
      const std::string layer = introspection_["layer"].get<std::string>();
      if (find_layer(c.config["model"]["layers"], layer) < 0)
        throw ConfigError("$.introspection.layer", "this candidate has no layer '" + layer + "' to introspect");
    }
  } catch (const Error& e) {
    c.invalid = e.what();
  }
  return c;
}

std::string SearchSpace::network_of(const Genome& genome) const {
  nlohmann::json choices;
  return apply(genome, choices).dump();  // objects print with sorted keys: equal configs, equal text
}

nlohmann::json SearchSpace::ready_to_train(const Candidate& candidate) const {
  nlohmann::json config = candidate.config;
  if (base_.contains("training"))
    config["training"] = base_["training"];
  else
    config.erase("training");
  config["description"] = "found by tessera search of " + file_;
  return config;
}

}  // namespace tessera::search
