#pragma once
// A machine's network for the replay (docs/simulation.md, "Platforms"): a JSON file naming a
// SimGrid cluster topology (fat tree, dragonfly, torus) with its links, each node's injection
// and what a message between two ranks of one node costs.
#include <string>
#include <vector>

#include <simgrid/s4u/Host.hpp>

namespace tessera::sim {

/// A platform built into the running SimGrid engine: one host per node, in the order ranks fill
/// them (ranks_per_node consecutive ranks a node).
struct Platform {
  std::string name, description;
  int ranks_per_node = 1;
  std::vector<simgrid::s4u::Host*> nodes;
};

/// Reads the platform file at `path` and builds it in the current engine. Throws
/// std::runtime_error naming the file and key for a missing or invalid figure, an unknown key or
/// topology.
Platform build_platform(const std::string& path);

}  // namespace tessera::sim
