// Catch2 main for Tessera tests: Kokkos must be initialised before any Tensor exists, and every
// test process works in a scratch folder of its own.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>

#include <cstring>
#include <iostream>

#include "support/scratch_folder.hpp"

int main(int argc, char* argv[]) {
  // ctest discovers tests by running the binary with --list-test-names-only right after the
  // build; that needs no Kokkos, which matters for CUDA builds made on machines without a GPU.
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0) return Catch::Session().run(argc, argv);
  // ctest runs each case as its own process, several at once, from one working directory: a
  // file a case writes by a relative name, or under a fixed name in the temporary folder, would
  // be another case's too. So each process runs inside a fresh folder under TMPDIR, which is
  // also the TMPDIR of everything it starts, and removes it at the end.
  const tessera::testing::ScratchFolder scratch("tessera-test");
  if (::chdir(scratch.path().c_str()) != 0 || ::setenv("TMPDIR", scratch.path().c_str(), 1) != 0) {
    std::cerr << "cannot work in the scratch folder " << scratch.path() << "\n";
    return 2;
  }
  // Kokkos' start-up advice would otherwise go to stdout, into every test's output.
  char disable_warnings[] = "--kokkos-disable-warnings";
  char* kokkos_argv[] = {argv[0], disable_warnings, nullptr};
  int kokkos_argc = 2;
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv);
    status = Catch::Session().run(argc, argv);
  }
  // Leave the folder before it is removed.
  if (::chdir("/") != 0) std::cerr << "cannot leave the scratch folder " << scratch.path() << "\n";
  return status;
}
