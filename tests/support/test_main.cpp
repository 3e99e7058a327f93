// Catch2 main for Tessera tests: Kokkos must be initialised before any Tensor exists.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <cstring>

int main(int argc, char* argv[]) {
  // ctest discovers tests by running the binary with --list-test-names-only right after the
  // build; that needs no Kokkos, which matters for CUDA builds made on machines without a GPU.
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0) return Catch::Session().run(argc, argv);
  // Kokkos' start-up advice would otherwise go to stdout, into every test's output.
  char disable_warnings[] = "--kokkos-disable-warnings";
  char* kokkos_argv[] = {argv[0], disable_warnings, nullptr};
  int kokkos_argc = 2;
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv);
  return Catch::Session().run(argc, argv);
}
