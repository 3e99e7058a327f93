#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/search/variation.hpp"

namespace tessera::search {

/// What a search trains and for how long.
struct SearchBudget {
  int64_t generations = 2;  // after the initial population
  int64_t population = 8;   // candidates per generation (μ = λ)
  int64_t steps = 20;       // optimizer steps per candidate
  int64_t trainers = 0;     // candidates trained at a time, 0: as many as the ranks allow
  int64_t ranks_per_candidate = 1;
  uint64_t seed = 0;
  int64_t max_resamples = 200;  // invalid draws in a row before a candidate slot gives up
  /// "nsga2"; or "random": every generation's candidates drawn uniformly (a baseline that
  /// trains as many candidates; the population is still kept by elitist replacement).
  std::string algorithm = "nsga2";
};

/// One decision of the space: a key of a block or of the optimizer and its choices.
struct Gene {
  std::string path;   // "$.blocks.conv2.filters", for reports and errors
  std::string block;  // the block's conv layer, empty for an optimizer key
  std::string key;    // "filters", "kernel", "activation", "batch_norm", "present"; or "lr", ...
  nlohmann::json::array_t choices;
};

/// A candidate as a run config, or why it is not one.
struct Candidate {
  Genome genome;
  nlohmann::json config;  // a complete run config
  std::string invalid;    // empty: valid
  /// Readable choices: {"conv1.filters": 8, "lr": 0.002, ...}.
  nlohmann::json choices;
};

/// A search space file (`tessera search SPACE.json`):
///   {"base": {run config}, "blocks": {"conv1": {"filters": [8, 16], "kernel": [3, 5],
///    "activation": ["relu", "elu"], "batch_norm": [true, false], "present": [true, false]}},
///    "optimizer": {"lr": [0.001, 0.003]}, "budget": {...},
///    "objectives": ["validation_loss", "parameters", "introspection"],
///    "introspection": {"layer": "act1", "samples": 16}}
/// A block is a conv layer of the base model named by its key, with the batch-norm and
/// activation layers that directly follow it. Every declared choice list is one gene. Errors
/// name the JSON path.
class SearchSpace {
 public:
  SearchSpace(const nlohmann::json& space, const std::string& file);

  const nlohmann::json& base() const { return base_; }
  const SearchBudget& budget() const { return budget_; }
  const std::vector<Gene>& genes() const { return genes_; }
  std::vector<int64_t> levels() const;
  /// The objectives' names, in order (two or more).
  const std::vector<std::string>& objectives() const { return objectives_; }
  /// The "introspection" section ({"layer": ..., "samples": ...}), empty if none.
  const nlohmann::json& introspection() const { return introspection_; }
  const std::string& file() const { return file_; }

  /// The candidate's run config (training.max_steps = budget.steps) checked by building its
  /// model graph, optimizer and loss on one rank without allocating: `invalid` says why not.
  Candidate materialise(const Genome& genome) const;
  /// What training the genome would train, as text: two genomes with the same network are the
  /// same candidate even where they differ in a gene with no effect (the filters of an
  /// absent block), and a search trains each network once.
  std::string network_of(const Genome& genome) const;
  /// The run config of a candidate as a stand-alone run: the base's training section.
  nlohmann::json ready_to_train(const Candidate& candidate) const;

 private:
  nlohmann::json apply(const Genome& genome, nlohmann::json& choices) const;

  std::string file_;
  nlohmann::json base_, introspection_;
  std::vector<std::string> objectives_;
  SearchBudget budget_;
  std::vector<Gene> genes_;
};

}  // namespace tessera::search
