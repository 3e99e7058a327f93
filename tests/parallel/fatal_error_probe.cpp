// Run under mpirun with 2+ ranks: rank 1 fails while rank 0 waits in a barrier that can never
// complete. The job must end on every rank with the message and a non-zero status; a hang
// fails the test by its timeout.
#include "tessera/core/error.hpp"
#include "tessera/parallel/communicator.hpp"

int main(int argc, char* argv[]) {
  tessera::parallel::MpiSession mpi(argc, argv);
  try {
    if (tessera::parallel::Communicator::world().rank() == 1) throw tessera::Error("deliberate failure on rank 1");
    MPI_Barrier(MPI_COMM_WORLD);
  } catch (const std::exception& e) {
    return tessera::parallel::handle_fatal_error(e);
  }
  return 0;
}
