#pragma once
#include <cstdint>
#include <string>

#include "tessera/model/graph.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::model {

/// Options that come from the command line rather than the model spec.
struct BuildOptions {
  std::string backend = "auto";  // default op backend for layers that do not name one
  uint64_t seed = 0;
  /// The type layers compute in unless their spec says otherwise; a layer without that
  /// precision runs in fp32. `precision_key` says where it was chosen, for errors.
  ElementType precision = ElementType::fp32;
  std::string precision_key = "$.training.precision";
  /// The ranks training this model together; every layer's distribution uses all of them.
  parallel::Communicator group;
  /// How batches split over `group`'s ranks; none: equally (a new SampleShares).
  std::shared_ptr<parallel::SampleShares> shares;
};

/// The graph of `spec` on the ranks of `options.group`: its layers made (not set up), one
/// ProcessGrid per distinct distribution, Redistribute nodes where a layer's distribution
/// differs from its producer's, every output's global shape, and what each layer declares as
/// parameters, counted. Allocates no tensor. Throws ConfigError naming the JSON path for a
/// wrong number of inputs, a spatial split a layer cannot run with, shapes that do not fit,
/// distributions that do not match the ranks, and outputs nothing uses.
Graph build_graph(const ModelSpec& spec, const BuildOptions& options);

}  // namespace tessera::model
