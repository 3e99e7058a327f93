// Run under mpirun: a maximum agreed one call late (LaggedAgreement). Each rank contributes a
// value only it knows at call k (rank r raises r + 1 at call r + 1); every rank must get the
// maximum of call k's contributions from call k + 1, and finish() must return the last call's.
// Exit status 0 on every rank when all holds.
#include <cstdio>

#include "support/mpi_program.hpp"
#include "tessera/parallel/lagged_agreement.hpp"

using namespace tessera;

int main(int argc, char** argv) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  bool failed = false;
  {
    parallel::LaggedAgreement agreement(world);
    const int calls = world.size() + 3;
    double expected = 0.0;  // what call k returns: the maximum contributed at call k - 1
    for (int k = 0; k < calls; ++k) {
      const double mine = k == world.rank() + 1 ? world.rank() + 1.0 : 0.0;
      const double agreed = agreement.exchange(mine);
      if (agreed != expected) {
        std::printf("rank %d: call %d agreed %g, expected %g\n", world.rank(), k, agreed, expected);
        failed = true;
      }
      expected = k <= world.size() && k >= 1 ? static_cast<double>(k) : 0.0;
    }
    if (agreement.finish() != expected) {
      std::printf("rank %d: finish() did not return the last call's agreement\n", world.rank());
      failed = true;
    }
    if (agreement.exchange(1.0) != 0.0 || agreement.finish() != 1.0) {
      std::printf("rank %d: an agreement after finish() did not start afresh\n", world.rank());
      failed = true;
    }
  }
  const int status = program.exit_status(failed);
  if (world.rank() == 0) std::printf("lagged agreement on %d ranks: %s\n", world.size(), status ? "FAILED" : "ok");
  return status;
}
