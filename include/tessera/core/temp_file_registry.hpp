#pragma once
#include <string>

namespace tessera {

/// Names a temporary file (the `*.tmp.<pid>` of an atomic write) for as long as it lives, so
/// that a process ended at once by a signal (core/stop_request.hpp) removes it instead of
/// leaving it beside the output. The paths are kept in fixed buffers that a signal handler can
/// read; a path too long for them, or more files open at once than there are slots, is not
/// registered (the write still works, only this clean-up is lost).
class TempFileRegistration {
 public:
  explicit TempFileRegistration(const std::string& path);
  ~TempFileRegistration();
  TempFileRegistration(const TempFileRegistration&) = delete;
  TempFileRegistration& operator=(const TempFileRegistration&) = delete;

  /// Whether the path found a slot.
  bool registered() const { return slot_ >= 0; }

 private:
  int slot_ = -1;
};

/// Unlinks every registered temporary file. Async-signal-safe: only atomics and unlink(2).
/// Leaves the registrations claimed, since the process is about to end.
void remove_registered_temp_files() noexcept;

/// How many paths are registered now (for tests).
int registered_temp_files() noexcept;

}  // namespace tessera
