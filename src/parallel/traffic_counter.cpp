#include "tessera/parallel/traffic_counter.hpp"

namespace tessera::parallel {

std::array<std::atomic<double>, TrafficCounter::kinds>& TrafficCounter::counts() {
  static std::array<std::atomic<double>, kinds> c{};
  return c;
}

const char* TrafficCounter::name(Kind kind) {
  switch (kind) {
    case channel: return "channel";
    case redistribution: return "redistribution";
    case halo: return "halo";
    case gradients: return "gradients";
    case local_learning: return "local_learning";
    case weights: return "weights";
    case kinds: break;
  }
  return "?";
}

}  // namespace tessera::parallel
