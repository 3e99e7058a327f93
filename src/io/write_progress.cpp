#include "tessera/io/write_progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "tessera/core/format.hpp"

namespace tessera::io {

WriteProgress::WriteProgress(bool enabled, int64_t total, int ranks)
    : enabled_(enabled), tty_(::isatty(::fileno(stdout)) != 0), total_(total), ranks_(ranks) {}

void WriteProgress::update(int64_t done, double bytes) {
  if (!enabled_ || total_ == 0) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const int tenth = static_cast<int>(10 * done / total_);
  if (!tty_ && tenth == last_tenth_ && done != total_) return;
  last_tenth_ = tenth;
  const double rate = static_cast<double>(done) / std::max(elapsed, 1e-9);
  const std::string line =
      "datagen: " + std::to_string(done) + "/" + std::to_string(total_) + " samples" +
      (ranks_ > 1 ? " (rank 0's share)" : "") +
      format(" %5.1f%%  %.1f samples/s  %.1f MB/s  ETA %.0f s", 100.0 * static_cast<double>(done) / total_, rate,
             bytes / 1e6 / std::max(elapsed, 1e-9), static_cast<double>(total_ - done) / std::max(rate, 1e-9));
  std::fprintf(stdout, tty_ ? "\r%s\033[K" : "%s\n", line.c_str());
  if (tty_ && done == total_) std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace tessera::io
