// Catch2 main for Tessera tests: Kokkos must be initialised before any Tensor exists.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

int main(int argc, char* argv[]) {
  // Kokkos' start-up advice goes to stdout, where ctest's test discovery would read it as
  // test names; the tests are sized for the default threads of a 2-core machine.
  char disable_warnings[] = "--kokkos-disable-warnings";
  char* kokkos_argv[] = {argv[0], disable_warnings, nullptr};
  int kokkos_argc = 2;
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv);
  return Catch::Session().run(argc, argv);
}
