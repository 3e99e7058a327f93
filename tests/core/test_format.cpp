#include "tessera/core/format.hpp"

#include <catch2/catch.hpp>
#include <string>

using tessera::fixed;
using tessera::format;

TEST_CASE("format writes printf-style output of any length", "[format]") {
  CHECK(format("%-6s|%5.1f", "ab", 3.14159) == "ab    |  3.1");
  CHECK(format("%d%%", 42) == "42%");
  CHECK(format("%s", "") == "");
  // Longer than any fixed buffer the callers used to keep: nothing is cut.
  const std::string long_name(1000, 'x');
  CHECK(format("[%s]", long_name.c_str()) == "[" + long_name + "]");
}

TEST_CASE("fixed rounds to the given digits", "[format]") {
  CHECK(fixed(0.12345, 3) == "0.123");
  CHECK(fixed(2.5, 0) == "2");
  CHECK(fixed(-1.0, 2) == "-1.00");
}
