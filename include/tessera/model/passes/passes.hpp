#pragma once
#include <string>
#include <vector>

#include "tessera/model/graph.hpp"

namespace tessera::model::passes {

/// A rewrite of a graph before its layers are set up; returns a line for each change.
struct GraphPass {
  const char* name;
  std::vector<std::string> (*run)(Graph& graph);
};

/// Every pass, in the order they run.
const std::vector<GraphPass>& all();
/// Runs every pass on `graph`, logging each change.
void run_all(Graph& graph);

}  // namespace tessera::model::passes
