#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "tessera/registry/backend_registry.hpp"

using tessera::registry::portable_only_warning;

TEST_CASE("A build with only the portable kernels is warned about, saying how to get the fast one",
          "[registry]") {
  const std::string w = portable_only_warning({"kokkos"});
  CHECK_THAT(w, Catch::Contains("no oneDNN") && Catch::Contains("portable Kokkos kernels") &&
                    Catch::Contains("5x slower") && Catch::Contains("TESSERA_ENABLE_ONEDNN=ON") &&
                    Catch::Contains("+onednn"));
  CHECK(portable_only_warning({"onednn", "kokkos"}).empty());
  CHECK(portable_only_warning({"cudnn", "kokkos"}).empty());
  // This build: the warning matches what it has.
  const auto backends = tessera::registry::available_backends();
  const bool fast = std::find(backends.begin(), backends.end(), "onednn") != backends.end() ||
                    std::find(backends.begin(), backends.end(), "cudnn") != backends.end();
  CHECK(portable_only_warning(backends).empty() == fast);
}
