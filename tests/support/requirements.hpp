#pragma once
// TESSERA_REQUIRE: the comma-separated list of what a run guarantees ("hwloc", "bf16-cpu", ...),
// which scripts/test.sh sets to what its own install provides, so that a test which would skip
// for want of one fails instead. Without Catch2, for the MPI test programs as well as skip.hpp.
#include <cstdlib>
#include <string>

namespace tessera::test {

/// True when TESSERA_REQUIRE lists `requirement`.
inline bool required(const std::string& requirement) {
  const char* env = std::getenv("TESSERA_REQUIRE");
  if (env == nullptr) return false;
  const std::string list = std::string(",") + env + ",";
  return list.find("," + requirement + ",") != std::string::npos;
}

}  // namespace tessera::test
