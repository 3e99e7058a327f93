#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace tessera::io {

/// Progress of writing a data set, shown by rank 0: a bar redrawn in place on a terminal, a
/// line per tenth otherwise ("datagen: 12/64 samples  18.8%  3.1 samples/s ...").
class WriteProgress {
 public:
  /// `total`: the samples this rank writes; `ranks` > 1 says the figures are rank 0's share.
  /// Disabled, update() prints nothing.
  WriteProgress(bool enabled, int64_t total, int ranks);
  /// `done` samples of `total` written, `bytes` in all.
  void update(int64_t done, double bytes);

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_, tty_;
  int64_t total_;
  int ranks_;
  int last_tenth_ = -1;
  Clock::time_point start_ = Clock::now();
};

}  // namespace tessera::io
