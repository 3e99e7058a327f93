#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "support/scratch_folder.hpp"
#include "tessera/core/log.hpp"

namespace {

/// What `print` writes to stdout, read back from a temporary file stdout points at meanwhile.
template <class Print>
std::string stdout_of(Print print) {
  std::fflush(stdout);
  const tessera::testing::ScratchFolder folder("tessera_log_test");
  const std::string path = folder / "stdout";
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(file >= 0);
  const int saved = ::dup(::fileno(stdout));
  ::dup2(file, ::fileno(stdout));
  print();
  std::fflush(stdout);
  ::dup2(saved, ::fileno(stdout));
  ::close(saved);
  ::close(file);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("A message ends a progress line left open instead of landing inside it", "[core][log]") {
  const std::string out = stdout_of([] {
    std::printf("\repoch 1/2 [###...]");
    tessera::log::set_open_line(true);
    tessera::log::info("conv1: halo overlap pays");
    std::printf("\repoch 1/2 [######]");
    tessera::log::set_open_line(true);
    tessera::log::end_open_line();
    tessera::log::end_open_line();  // nothing open: nothing printed
    tessera::log::info("done");
  });
  CHECK(out == "\repoch 1/2 [###...]\nconv1: halo overlap pays\n\repoch 1/2 [######]\ndone\n");
}
