#include "tessera/bench/progress_bar.hpp"

#include <unistd.h>

#include <cstdio>

#include "tessera/core/log.hpp"

namespace tessera::bench {

ProgressBar::ProgressBar(bool enabled, int64_t total)
    : enabled_(enabled && log::rank() == 0 && ::isatty(::fileno(stderr)) != 0), total_(total > 0 ? total : 1) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::advance(const std::string& what) {
  ++done_;
  if (!enabled_) return;
  constexpr int width = 30;
  const int64_t done = done_ < total_ ? done_ : total_;
  std::string bar(static_cast<size_t>(width * done / total_), '#');
  bar.resize(width, '.');
  std::fprintf(stderr, "\r\033[K[%s] %lld/%lld %s", bar.c_str(), static_cast<long long>(done),
               static_cast<long long>(total_), what.c_str());
  std::fflush(stderr);
  open_line_ = true;
}

void ProgressBar::finish() {
  if (!open_line_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  open_line_ = false;
}

}  // namespace tessera::bench
