#include "tessera/dist/distribution.hpp"

namespace tessera::dist {

std::string Distribution::str() const {
  return "{sample " + std::to_string(sample) + ", channel " + std::to_string(channel) + ", depth " +
         std::to_string(depth) + ", height " + std::to_string(height) + ", width " + std::to_string(width) + "}";
}

}  // namespace tessera::dist
