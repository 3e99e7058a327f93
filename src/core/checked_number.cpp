#include "tessera/core/checked_number.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

namespace tessera {
namespace {

constexpr int64_t kLeast = std::numeric_limits<int64_t>::min();
constexpr int64_t kMost = std::numeric_limits<int64_t>::max();
constexpr double kLargest = std::numeric_limits<double>::max();

/// A value as a message quotes it: cut, so that a megabyte of digits stays one line.
std::string quoted(std::string_view text) {
  const size_t keep = 40;
  std::string s(text.substr(0, keep));
  if (text.size() > keep) s += "... (" + std::to_string(text.size()) + " characters)";
  return "'" + s + "'";
}

}  // namespace

std::string IntegerBounds::text() const {
  if (min == kLeast && max == kMost) return "an integer";
  if (max == kMost) return "an integer of at least " + std::to_string(min);
  if (min == kLeast) return "an integer of at most " + std::to_string(max);
  return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

bool RealBounds::contains(double v) const {
  if (!std::isfinite(v)) return false;
  const bool above = min_open ? v > min : v >= min;
  const bool below = max_open ? v < max : v <= max;
  return above && below;
}

std::string RealBounds::text() const {
  const bool any_min = min == -kLargest && !min_open, any_max = max == kLargest && !max_open;
  if (any_min && any_max) return "a finite number";
  if (any_max) return std::string("a finite number ") + (min_open ? "above " : "of at least ") + format_number(min);
  if (any_min) return std::string("a finite number ") + (max_open ? "below " : "of at most ") + format_number(max);
  return "a finite number in " + interval();
}

std::string RealBounds::interval() const {
  const bool any_min = min == -kLargest && !min_open, any_max = max == kLargest && !max_open;
  if (any_min && any_max) return "finite";
  if (any_max) return (min_open ? "> " : ">= ") + format_number(min);
  if (any_min) return (max_open ? "< " : "<= ") + format_number(max);
  return std::string(min_open ? "(" : "[") + format_number(min) + ", " + format_number(max) + (max_open ? ")" : "]");
}

std::string integer_problem(int64_t value, const IntegerBounds& bounds) {
  if (bounds.contains(value)) return "";
  return "expected " + bounds.text() + ", got " + std::to_string(value);
}

std::string real_problem(double value, const RealBounds& bounds) {
  if (bounds.contains(value)) return "";
  return "expected " + bounds.text() + ", got " +
         (std::isfinite(value) ? format_number(value)
          : std::isnan(value)  ? "nan"
          : value > 0          ? "inf"
                               : "-inf");
}

std::string read_integer(std::string_view text, const IntegerBounds& bounds, int64_t& value) {
  const std::string expected = "expected " + bounds.text() + ", got ";
  size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (i == text.size()) return expected + quoted(text);
  for (size_t j = i; j < text.size(); ++j)
    if (text[j] < '0' || text[j] > '9') return expected + quoted(text);
  const std::string digits(text);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(digits.c_str(), &end, 10);
  // Past 64 bits: strtoll clamps and sets ERANGE; the value as given is outside any bounds.
  if (errno == ERANGE || *end != '\0') return expected + quoted(text);
  if (!bounds.contains(v)) return expected + std::to_string(v);
  value = v;
  return "";
}

std::string read_real(std::string_view text, const RealBounds& bounds, double& value) {
  const std::string expected = "expected " + bounds.text() + ", got ";
  // Decimal notation only: strtod would also take "nan", "inf", "0x1p3" and leading spaces.
  bool digit = false;
  for (char c : text) {
    digit = digit || (c >= '0' && c <= '9');
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
      return expected + quoted(text);
  }
  if (!digit) return expected + quoted(text);
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0') return expected + quoted(text);
  // Overflow gives ±HUGE_VAL (not finite, refused below); underflow to 0 or a denormal is the
  // nearest double and passes as such.
  if (!bounds.contains(v)) return expected + (std::isfinite(v) ? format_number(v) : quoted(text));
  value = v;
  return "";
}

int64_t checked_integer(std::string_view text, const IntegerBounds& bounds, const std::string& source) {
  int64_t v = 0;
  if (std::string problem = read_integer(text, bounds, v); !problem.empty()) throw ConfigError(source, problem);
  return v;
}

double checked_real(std::string_view text, const RealBounds& bounds, const std::string& source) {
  double v = 0;
  if (std::string problem = read_real(text, bounds, v); !problem.empty()) throw ConfigError(source, problem);
  return v;
}

void check_integer(int64_t value, const IntegerBounds& bounds, const std::string& source) {
  if (std::string problem = integer_problem(value, bounds); !problem.empty()) throw ConfigError(source, problem);
}

void check_real(double value, const RealBounds& bounds, const std::string& source) {
  if (std::string problem = real_problem(value, bounds); !problem.empty()) throw ConfigError(source, problem);
}

int64_t checked_product(int64_t a, int64_t b, const std::string& source, const std::string& what, int64_t limit) {
  if (a < 0 || b < 0)
    throw ConfigError(source, what + " of " + std::to_string(a) + " x " + std::to_string(b) + " is negative");
  if (a != 0 && b > limit / a)
    throw ConfigError(source, what + " of " + std::to_string(a) + " x " + std::to_string(b) + " is more than " +
                                  std::to_string(limit));
  return a * b;
}

}  // namespace tessera
