// The graph passes. Adding one: its file, its test, one line here.
#include "tessera/model/passes/passes.hpp"

#include "tessera/core/log.hpp"
#include "tessera/model/passes/fuse_batch_norm_activation.hpp"
#include "tessera/model/passes/fuse_conv_max_pool.hpp"
#include "tessera/model/passes/move_activations_after_max_pools.hpp"

namespace tessera::model::passes {

const std::vector<GraphPass>& all() {
  static const std::vector<GraphPass> list{
      {"move_activations_after_max_pools", &move_activations_after_max_pools},
      {"fuse_conv_max_pool", &fuse_conv_max_pool},
      {"fuse_batch_norm_activation", &fuse_batch_norm_activation},
  };
  return list;
}

void run_all(Graph& graph) {
  for (const auto& pass : all())
    for (const auto& line : pass.run(graph)) log::info(line);
}

}  // namespace tessera::model::passes
