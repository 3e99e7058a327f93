#pragma once
#include <string>

namespace tessera {

/// printf-style formatting into a std::string of whatever length the result needs, checked by
/// the compiler like printf: format("%-22s %10.1f", name.c_str(), ms). One place for the
/// number formatting of tables and progress lines, instead of a char buffer and snprintf in
/// each caller (where a long name silently truncated the line).
std::string format(const char* fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/// `value` with `digits` digits after the point: fixed(0.12345, 3) == "0.123".
std::string fixed(double value, int digits);

/// `value` in the shortest %g form of 6 to 17 significant digits that reads back as the same
/// double: 0.1 as "0.1" (not 0.10000000000000001), 1e-06, 123456789. For hyperparameters
/// and bounds in messages, where the value shown must be the value used.
std::string format_number(double value);

}  // namespace tessera
