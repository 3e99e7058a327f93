#pragma once
// Integer options' checks with messages a user can act on: CLI11's PositiveNumber and
// NonNegativeNumber name their range as "0.000000 to 1797693…" (a 309-digit number).
#include <CLI/CLI.hpp>

#include <cctype>
#include <string>

namespace tessera::cli {

/// An integer of at least `min`: "expected an integer of at least 1, got 0".
inline CLI::Validator at_least(long long min) {
  const std::string expected = "expected an integer of at least " + std::to_string(min);
  return CLI::Validator(
      [min, expected](std::string& value) -> std::string {
        size_t i = value.size() > 1 && (value[0] == '-' || value[0] == '+') ? 1 : 0;
        bool digits = i < value.size();
        for (; i < value.size(); ++i) digits = digits && std::isdigit(static_cast<unsigned char>(value[i]));
        if (!digits) return expected + ", got '" + value + "'";
        // Digits only: compare as long double, so that a seed beyond long long still passes.
        if (std::stold(value) < static_cast<long double>(min)) return expected + ", got " + value;
        return {};
      },
      "INT>=" + std::to_string(min));
}

}  // namespace tessera::cli
