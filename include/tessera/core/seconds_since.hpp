#pragma once
#include <chrono>

namespace tessera {

/// Seconds from `start` to now on the steady clock (what progress lines and timings report).
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tessera
