#pragma once
#include <istream>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera {

/// Reads JSON that a user or a file supplied (run configs, `--distribution`, checkpoint
/// headers) the way a config must be read: `//` and `/* */` comments allowed; an object with
/// the same key twice and nesting deeper than 64 levels refused; a number too large for a
/// double named. Errors are ConfigError naming `source` and the `$.` path where the parse
/// stopped (nlohmann's own message carries line and column).
nlohmann::json parse_json_text(const std::string& text, const std::string& source);
nlohmann::json parse_json_stream(std::istream& in, const std::string& source);

/// A value as errors quote it: its JSON text, cut to a short excerpt. Quoting a 100 MB string
/// or a deep object whole makes the message unreadable and the log huge.
std::string json_excerpt(const nlohmann::json& j);

}  // namespace tessera
