#include <catch2/catch.hpp>

#include <string>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/temp_file_registry.hpp"

using namespace tessera;

TEST_CASE("A temporary file is registered while its registration lives", "[core][signals]") {
  const int before = registered_temp_files();
  {
    const TempFileRegistration a("out.tmp.1"), b("other.tmp.1");
    CHECK(a.registered());
    CHECK(b.registered());
    CHECK(registered_temp_files() == before + 2);
  }
  CHECK(registered_temp_files() == before);
  // A path longer than the handler's buffers is not registered, and nothing breaks.
  const TempFileRegistration too_long(std::string(5000, 'x'));
  CHECK_FALSE(too_long.registered());
  CHECK(registered_temp_files() == before);
}

TEST_CASE("write_file_atomically registers its temporary file while it writes", "[core][signals]") {
  const int before = registered_temp_files();
  int during = -1;
  const std::string path = "tessera_registry_test.txt";
  write_file_atomically(path, [&](std::FILE* f) {
    during = registered_temp_files();
    write_all(f, "x", 1, path);
  });
  CHECK(during == before + 1);
  CHECK(registered_temp_files() == before);
  std::remove(path.c_str());
}
