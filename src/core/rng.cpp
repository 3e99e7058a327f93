#include "tessera/core/rng.hpp"

namespace tessera::rng {

uint64_t stream_of(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace tessera::rng
