#include "tessera/core/format.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace tessera {

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string out;
  if (n > 0) {
    std::vector<char> buffer(static_cast<size_t>(n) + 1);
    std::vsnprintf(buffer.data(), buffer.size(), fmt, again);
    out.assign(buffer.data(), static_cast<size_t>(n));
  }
  va_end(again);
  return out;
}

std::string fixed(double value, int digits) { return format("%.*f", digits, value); }

std::string format_number(double value) {
  for (int precision = 6; precision < 17; ++precision) {
    const std::string s = format("%.*g", precision, value);
    if (std::strtod(s.c_str(), nullptr) == value) return s;
  }
  return format("%.17g", value);
}

}  // namespace tessera
