#pragma once
#include <signal.h>

#include <string>

namespace tessera {

/// What the stop signals (SIGTERM, SIGINT, SIGUSR1: what batch systems send before they end
/// or pre-empt a job) do while StopSignalHandlers are installed.
enum class StopMode {
  /// The first signal only records a stop request (stop_signal()), which the work checks at a
  /// safe point (training: after the current step, see train::Trainer); a second one ends the
  /// process at once.
  after_step,
  /// Every signal ends the process at once (work that has no safe point to stop at, such as
  /// writing a data set, whose temporary files are removed).
  at_once,
};

/// Installs the process's handlers for the stop signals while it lives and puts the previous
/// ones back when it goes. The handlers are async-signal-safe and harmless in any thread: they
/// set an atomic flag, or, to end at once, unlink the registered temporary files
/// (core/temp_file_registry.hpp), write one line to stderr and _exit(stop_exit_code(signal)).
/// One set at a time per process.
class StopSignalHandlers {
 public:
  explicit StopSignalHandlers(StopMode mode);
  ~StopSignalHandlers();
  StopSignalHandlers(const StopSignalHandlers&) = delete;
  StopSignalHandlers& operator=(const StopSignalHandlers&) = delete;

 private:
  struct sigaction previous_[3];
};

/// The first stop signal this process received (0: none).
int stop_signal() noexcept;
/// Records a stop request for `signal` as if it had arrived (the first request wins).
void request_stop(int signal) noexcept;
/// Forgets the stop request, for work that starts afresh in the same process.
void clear_stop_request() noexcept;

/// The exit status of a process stopped by `signal`: 128 + its number, as shells report a
/// process ended by it (143 for SIGTERM, 130 for SIGINT, 138 for SIGUSR1 on Linux).
int stop_exit_code(int signal) noexcept;
/// "SIGTERM", "SIGINT", "SIGUSR1", or "signal N".
std::string signal_name(int signal);

/// Blocks the stop signals in the calling thread while it lives. Threads started meanwhile
/// inherit the mask, so helper threads (prefetching, communication progress) never run a
/// handler and a signal goes to a thread that does the work.
class StopSignalsBlocked {
 public:
  StopSignalsBlocked();
  ~StopSignalsBlocked();
  StopSignalsBlocked(const StopSignalsBlocked&) = delete;
  StopSignalsBlocked& operator=(const StopSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace tessera
