#include "tessera/core/json_reader.hpp"

#include <functional>
#include <set>
#include <sstream>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera {
namespace {

/// Watches a parse for what nlohmann::json accepts but a config must not: an object with the
/// same key twice (the parser keeps the last value, silently dropping the first) and nesting
/// deeper than any config needs (deep trees exhaust the stack of code that walks them
/// recursively). Keeps the $. path of the value being read, for the error.
class ConfigParseGuard {
 public:
  /// Far deeper than any run config (a layer's distribution sits at depth 5).
  static constexpr size_t kMaxDepth = 64;

  explicit ConfigParseGuard(std::string file) : file_(std::move(file)) {}

  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (frames_.size() >= kMaxDepth)
          throw ConfigError(file_ + ": " + path(), "nested deeper than " + std::to_string(kMaxDepth) + " levels");
        frames_.push_back(Frame{event == Event::object_start, {}, {}, 0});
        break;
      case Event::key: {
        Frame& top = frames_.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second)
          throw ConfigError(file_ + ": " + path(), "duplicate key (each key may appear once in an object)");
        break;
      }
      case Event::object_end:
      case Event::array_end:
        frames_.pop_back();
        next_element();
        break;
      case Event::value: next_element(); break;
    }
    return true;
  }

  /// The $. path of the value being read.
  std::string path() const {
    std::string p = "$";
    for (const auto& f : frames_)
      p += f.object ? (f.key.empty() ? "" : "." + f.key) : "[" + std::to_string(f.index) + "]";
    return p;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;    // the key being read (objects)
    int64_t index = 0;  // the element being read (arrays)
  };

  void next_element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }

  std::string file_;
  std::vector<Frame> frames_;
};

}  // namespace

std::string json_excerpt(const nlohmann::json& j) {
  constexpr size_t kMax = 80;
  std::string text = j.dump();
  if (text.size() <= kMax) return text;
  const size_t total = text.size();
  text.resize(kMax);
  return text + "... (" + std::to_string(total) + " characters)";
}

nlohmann::json parse_json_stream(std::istream& in, const std::string& source) {
  ConfigParseGuard guard(source);
  try {
    // By reference: after a failure the guard knows where the parse was.
    return nlohmann::json::parse(in, std::ref(guard), true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(source, std::string("invalid JSON: ") + e.what());
  } catch (const nlohmann::json::out_of_range& e) {
    // A number too large for a double (1e999): the parser names neither line nor key.
    throw ConfigError(source + ": " + guard.path(), std::string("invalid JSON: ") + e.what());
  }
}

nlohmann::json parse_json_text(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  return parse_json_stream(in, source);
}

}  // namespace tessera
