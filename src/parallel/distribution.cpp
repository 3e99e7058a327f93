#include "tessera/parallel/distribution.hpp"

namespace tessera::parallel {

std::string Distribution::channel_split_str() const {
  if (channel > 1 && filter > 1) return "channel " + std::to_string(channel) + " x filter " + std::to_string(filter);
  return filter > 1 ? "filter " + std::to_string(filter) : "channel " + std::to_string(channel);
}

std::string Distribution::str() const {
  // Only the dimensions that are split: "{sample 2, depth 4}"; "{sample 1}" for one rank.
  std::string s;
  auto add = [&s](const char* name, int count) {
    if (count != 1) s += (s.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(count);
  };
  add("sample", sample);
  add("channel", channel);
  add("filter", filter);
  add("depth", depth);
  add("height", height);
  add("width", width);
  if (shard_weights) s += (s.empty() ? "sample 1" : "") + std::string(", weights sharded");
  return "{" + (s.empty() ? std::string("sample 1") : s) + "}";
}

}  // namespace tessera::parallel
