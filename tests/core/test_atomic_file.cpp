#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"

using namespace tessera;

namespace {
std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("write_file_atomically replaces the file only when the write completes", "[core][io]") {
  const std::string path = "tessera_atomic_test.txt";
  write_file_atomically(path, [&](std::FILE* f) { write_all(f, "first", 5, path); });
  CHECK(slurp(path) == "first");
  // A writer that fails half-way leaves the previous file intact and no temporary behind.
  CHECK_THROWS_AS(write_file_atomically(path,
                                        [&](std::FILE* f) {
                                          write_all(f, "sec", 3, path);
                                          throw IoError("simulated failure");
                                        }),
                  IoError);
  CHECK(slurp(path) == "first");
  write_file_atomically(path, [&](std::FILE* f) { write_all(f, "second", 6, path); });
  CHECK(slurp(path) == "second");
  std::remove(path.c_str());
  CHECK_THROWS_WITH(write_file_atomically("/nonexistent-dir/x.bin", [](std::FILE*) {}),
                    Catch::Contains("/nonexistent-dir/x.bin"));
}
