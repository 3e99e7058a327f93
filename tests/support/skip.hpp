#pragma once
// Skipping a test case whose precondition this build or machine lacks, visibly: the reason goes
// to the output as a Catch2 warning, and the marker line below makes ctest report the case as
// skipped rather than passed (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt). Where the
// environment variable TESSERA_REQUIRE names the requirement (a comma-separated list that
// scripts/test.sh sets to what its own install guarantees), the skip fails the case instead,
// so CI cannot go green on a case that never ran. (Catch2 2.x has no SKIP of its own.)
#include <catch2/catch.hpp>

#include <iostream>

#include "support/requirements.hpp"

/// Ends the current test case as skipped, naming `requirement` (what it needed: "hwloc",
/// "host-build", ...) and why; fails it where TESSERA_REQUIRE lists the requirement.
#define TESSERA_SKIP(requirement, reason)                                                                           \
  do {                                                                                                              \
    if (::tessera::test::required(requirement))                                                                     \
      FAIL("skipped for want of '" << (requirement) << "', which TESSERA_REQUIRE says this run has: " << (reason)); \
    WARN("skipped (needs " << (requirement) << "): " << (reason));                                                  \
    std::cout << "TESSERA-SKIPPED: " << (reason) << std::endl;                                                      \
    return;                                                                                                         \
  } while (false)
