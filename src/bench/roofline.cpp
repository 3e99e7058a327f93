#include "tessera/bench/roofline.hpp"

#include <algorithm>

namespace tessera::bench {

double roofline_seconds(double flops, double bytes, double gflops, double gbs) {
  return std::max(flops / (gflops * 1e9), bytes / (gbs * 1e9));
}

bool memory_bound(double flops, double bytes, double gflops, double gbs) {
  return bytes / (gbs * 1e9) > flops / (gflops * 1e9);
}

double architectural_efficiency(double seconds, double flops, double bytes, double gflops, double gbs) {
  return seconds > 0 ? roofline_seconds(flops, bytes, gflops, gbs) / seconds : 0.0;
}

}  // namespace tessera::bench
