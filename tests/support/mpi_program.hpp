#pragma once
// The frame of the MPI test programs (tests/parallel, tests/io): MPI and Kokkos started for the
// program's lifetime, and one exit status for the whole job.
#include <Kokkos_Core.hpp>

#include <memory>

#include "tessera/parallel/communicator.hpp"

namespace tessera::testing {

/// Initialises MPI, then Kokkos (without its thread-binding advice, which every rank would
/// print), and finalises them in reverse order.
class MpiProgram {
 public:
  MpiProgram(int& argc, char**& argv) : mpi_(argc, argv) {
    char disable_warnings[] = "--kokkos-disable-warnings";
    char* kokkos_argv[] = {argv[0], disable_warnings, nullptr};
    int kokkos_argc = 2;
    kokkos_ = std::make_unique<Kokkos::ScopeGuard>(kokkos_argc, kokkos_argv);
  }
  /// 1 on every rank when any rank reports `failed`, else 0.
  int exit_status(bool failed) const {
    int64_t any = failed ? 1 : 0;
    parallel::Communicator::world().allreduce_sum(&any, 1);
    return any ? 1 : 0;
  }

 private:
  parallel::MpiSession mpi_;
  std::unique_ptr<Kokkos::ScopeGuard> kokkos_;
};

}  // namespace tessera::testing
