#pragma once
#include "tessera/parallel/communicator.hpp"

namespace tessera::parallel {

/// How many ranks of `group` share this rank's node (its memory). Collective over the group;
/// 1 for a serial group.
int ranks_on_this_node(const Communicator& group);

}  // namespace tessera::parallel
