#pragma once
// How often a piece of text occurs in generated output (SVG, HTML), for tests that count
// elements without parsing.
#include <string>

namespace tessera::testing {

inline size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace tessera::testing
