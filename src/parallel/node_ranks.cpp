#include "tessera/parallel/node_ranks.hpp"

namespace tessera::parallel {

int ranks_on_this_node(const Communicator& group) {
  if (group.handle() == MPI_COMM_NULL) return 1;
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(group.handle(), MPI_COMM_TYPE_SHARED, group.rank(), MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int size = 1;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return size;
}

}  // namespace tessera::parallel
