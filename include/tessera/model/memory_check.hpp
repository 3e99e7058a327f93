#pragma once
#include <cstdint>
#include <string>

#include "tessera/core/memory_capacity.hpp"
#include "tessera/model/graph.hpp"

namespace tessera::model {

/// What training a graph at one global batch needs on one rank, at the least: every node's
/// output and a gradient as large (backward keeps both), and the parameters with their
/// gradients. Op workspaces, optimizer state and data come on top, so a run that passes may
/// still be short of memory, but one that fails cannot fit.
struct MemoryNeed {
  int64_t bytes = 0;
  size_t largest_node = 0;  // the node that needs the most
  int64_t largest_bytes = 0;
};

/// Throws ShapeError where a count does not fit 64 bits.
MemoryNeed training_memory_need(const Graph& graph, int64_t batch);

/// Refuses, before anything is allocated, a batch whose training cannot fit in
/// `bytes_per_rank`: a ConfigError at the path of the layer that needs the most, naming its
/// shape, the total, the capacity as `capacity_text` describes it, and `batch_key` (the key
/// or flag that set the batch).
void require_training_fits(const Graph& graph, int64_t batch, const std::string& batch_key, int64_t bytes_per_rank,
                           const std::string& capacity_text);

/// What one rank of `group` may use on this machine: memory_capacity() shared by the group's
/// ranks on this node, and those words for messages ("physical memory 23.4 GiB shared by 2 ranks
/// on this node"). Collective over `group`.
struct RankMemory {
  int64_t bytes = 0;
  std::string text;
};
RankMemory memory_per_rank_here(const parallel::Communicator& group);
/// require_training_fits against this machine: memory_capacity() shared by the ranks of
/// `group` on this node. Collective over `group`.
void require_training_fits_this_machine(const Graph& graph, int64_t batch, const std::string& batch_key,
                                        const parallel::Communicator& group);

}  // namespace tessera::model
