#pragma once
// The one place numbers from users are checked: command-line flags (text), config keys and
// file fields (already converted). Every check is stated so that NaN fails it (`!(v >= lo)`,
// never `v < lo`), every integer is read whole (no "12abc", no wrap past 64 bits), and every
// error names where the number came from.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace tessera {

/// Inclusive bounds of an integer a user gives.
struct IntegerBounds {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  /// "an integer from 1 to 1073741824", "an integer of at least 0".
  std::string text() const;
  bool contains(int64_t v) const { return v >= min && v <= max; }
};

/// Bounds of a real number a user gives; every accepted value is finite, whatever the bounds.
struct RealBounds {
  double min = -std::numeric_limits<double>::max();
  double max = std::numeric_limits<double>::max();
  bool min_open = false, max_open = false;  // (min, ...] / [..., max)
  /// "a finite number in (0, 1]", "a finite number".
  std::string text() const;
  /// The bounds alone, as --help shows them: "(0, 1]", ">= 0", "finite".
  std::string interval() const;
  bool contains(double v) const;
};

/// Why `value` is outside `bounds` ("expected an integer from 1 to 64, got 0"), or "".
std::string integer_problem(int64_t value, const IntegerBounds& bounds);
std::string real_problem(double value, const RealBounds& bounds);

/// Reads all of `text` as a decimal integer within `bounds` into `value`; returns why it could
/// not ("expected an integer from 1 to 64, got '99999999999999999999999999999'"), or "".
std::string read_integer(std::string_view text, const IntegerBounds& bounds, int64_t& value);
/// Reads all of `text` as a finite decimal number within `bounds`; "nan", "inf" and "1e999"
/// are refused.
std::string read_real(std::string_view text, const RealBounds& bounds, double& value);

/// The throwing forms: ConfigError(`source`, problem), `source` naming the flag, key or field.
int64_t checked_integer(std::string_view text, const IntegerBounds& bounds, const std::string& source);
double checked_real(std::string_view text, const RealBounds& bounds, const std::string& source);
void check_integer(int64_t value, const IntegerBounds& bounds, const std::string& source);
void check_real(double value, const RealBounds& bounds, const std::string& source);

/// a × b when it is at most `limit` (both non-negative); otherwise ConfigError(`source`, "...
/// `what` of a × b is more than `limit`"). For derived quantities (batch × accumulate, epochs ×
/// steps): each factor passed its own bounds, the product is checked here.
int64_t checked_product(int64_t a, int64_t b, const std::string& source, const std::string& what,
                        int64_t limit = std::numeric_limits<int64_t>::max());

}  // namespace tessera
