#pragma once
#include <cstdint>
#include <string>

namespace tessera::bench {

/// Progress of a benchmark over a known number of items, on stderr so that tables on stdout
/// stay clean: on a terminal one bar redrawn in place, elsewhere nothing (logs stay short).
class ProgressBar {
 public:
  ProgressBar(bool enabled, int64_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  /// One item done; `what` names the next one.
  void advance(const std::string& what);
  /// Clears the bar before other output.
  void finish();

 private:
  bool enabled_;
  int64_t total_, done_ = 0;
  bool open_line_ = false;
};

}  // namespace tessera::bench
