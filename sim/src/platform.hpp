#pragma once
// A machine's network for the replay (docs/simulation.md, "Platforms"): a JSON file naming a
// SimGrid cluster topology (fat tree, dragonfly, torus) with its links, each node's injection
// and what a message between two ranks of one node costs.
#include <string>
#include <vector>

#include <simgrid/s4u/Host.hpp>

namespace tessera::sim {

/// A platform built into the running SimGrid engine: one host per network endpoint of a node
/// (a node with one NIC per GPU has several), nodes filled by consecutive ranks.
struct Platform {
  std::string name, description;
  int ranks_per_node = 1;
  int endpoints_per_node = 1;
  double software_latency = 0;  // seconds a message leaving its node costs the sender first
  std::vector<simgrid::s4u::Host*> endpoints;  // endpoints_per_node consecutive ones per node

  int64_t nodes() const { return static_cast<int64_t>(endpoints.size()) / endpoints_per_node; }
  /// The endpoint rank `rank` sends from: its node's, the node's ranks spread evenly over them.
  simgrid::s4u::Host* host_of(int rank) const {
    const int node = rank / ranks_per_node, local = rank % ranks_per_node;
    return endpoints[static_cast<size_t>(node * endpoints_per_node + local * endpoints_per_node / ranks_per_node)];
  }
};

/// Reads the platform file at `path` and builds it in the current engine. Throws
/// std::runtime_error naming the file and key for a missing or invalid figure, an unknown key or
/// topology.
Platform build_platform(const std::string& path);

}  // namespace tessera::sim
