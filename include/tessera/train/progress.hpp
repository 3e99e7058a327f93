#pragma once
#include <cstdint>
#include <string>

namespace tessera::train {

/// Step progress on the console. On a terminal: one bar redrawn in place; otherwise (logs,
/// CI, pipes): a plain line every `every` steps, so logs stay readable.
class ProgressReporter {
 public:
  ProgressReporter(bool enabled, int64_t every);
  /// `status` is appended, e.g. "loss 0.1234  lr 1.0e-03  52.1 samples/s".
  void step(int64_t epoch, int64_t epochs, int64_t step_in_epoch, int64_t steps_per_epoch, int64_t global_step,
            const std::string& status);
  /// Ends the in-place line (if any) before other output.
  void finish_line();

 private:
  bool enabled_, tty_;
  int64_t every_;
};

}  // namespace tessera::train
