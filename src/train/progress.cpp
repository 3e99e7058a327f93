#include "tessera/train/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "tessera/core/log.hpp"

namespace tessera::train {

ProgressReporter::ProgressReporter(bool enabled, int64_t every)
    : enabled_(enabled), tty_(::isatty(::fileno(stdout)) != 0), every_(every < 1 ? 1 : every) {}

void ProgressReporter::step(int64_t epoch, int64_t epochs, int64_t step_in_epoch, int64_t steps_per_epoch,
                            int64_t global_step, const std::string& status) {
  if (!enabled_) return;
  if (tty_) {
    constexpr int width = 30;
    const int filled = static_cast<int>(width * step_in_epoch / (steps_per_epoch > 0 ? steps_per_epoch : 1));
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(width, '.');
    std::printf("\r\033[Kepoch %lld/%lld [%s] %lld/%lld  %s", static_cast<long long>(epoch + 1),
                static_cast<long long>(epochs), bar.c_str(), static_cast<long long>(step_in_epoch),
                static_cast<long long>(steps_per_epoch), status.c_str());
    std::fflush(stdout);
    log::set_open_line(true);
  } else if (global_step % every_ == 0 || step_in_epoch == steps_per_epoch) {
    std::printf("epoch %lld/%lld step %lld/%lld (global %lld)  %s\n", static_cast<long long>(epoch + 1),
                static_cast<long long>(epochs), static_cast<long long>(step_in_epoch),
                static_cast<long long>(steps_per_epoch), static_cast<long long>(global_step), status.c_str());
    std::fflush(stdout);
  }
}

// The open line is the log's to know: a message printed meanwhile may have ended it already.
void ProgressReporter::finish_line() { log::end_open_line(); }

}  // namespace tessera::train
