#pragma once
// The checks of numeric options: CLI11 validators over Tessera's one checked conversion
// (core/checked_number.hpp). CLI11's own Range lets NaN through (every comparison with NaN is
// false) and names its range as "0.000000 to 1797693..." (a 309-digit number) for
// PositiveNumber; these read the text whole, refuse what is not finite, and say the bounds.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "tessera/core/checked_number.hpp"

namespace tessera::cli {

/// An integer within `bounds`: "expected an integer from 1 to 1073741824, got 0".
inline CLI::Validator integer_in(IntegerBounds bounds) {
  return CLI::Validator(
      [bounds](std::string& text) -> std::string {
        int64_t v = 0;
        return read_integer(text, bounds, v);
      },
      "[" + std::to_string(bounds.min) + ", " + std::to_string(bounds.max) + "]");
}

inline CLI::Validator integer_in(int64_t min, int64_t max) { return integer_in(IntegerBounds{min, max}); }

/// A finite number within `bounds`: "expected a finite number in [0, 1], got nan".
inline CLI::Validator real_in(RealBounds bounds) {
  return CLI::Validator(
      [bounds](std::string& text) -> std::string {
        double v = 0;
        return read_real(text, bounds, v);
      },
      bounds.interval());
}

/// [min, max], or (min, max] with `min_open`, or [min, max) with `max_open`.
inline CLI::Validator real_in(double min, double max, bool min_open = false, bool max_open = false) {
  return real_in(RealBounds{min, max, min_open, max_open});
}

/// The largest count of samples, volumes or steps a flag takes: far beyond any run, and small
/// enough that its products with sizes and epochs stay within 64 bits.
constexpr int64_t kMaxCount = int64_t{1} << 40;

}  // namespace tessera::cli
