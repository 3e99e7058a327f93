#include "tessera/core/stop_request.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "tessera/core/temp_file_registry.hpp"

namespace tessera {
namespace {

constexpr int stop_signals[3] = {SIGTERM, SIGINT, SIGUSR1};

std::atomic<int> requested{0};
std::atomic<int> mode{static_cast<int>(StopMode::after_step)};
static_assert(std::atomic<int>::is_always_lock_free, "signal handlers use these atomics");

/// Async-signal-safe text for the message of a handler that ends the process.
const char* name_for_handler(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    default: return "a stop signal";
  }
}

void write_stderr(const char* text) {
  ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

[[noreturn]] void end_now(int signal) {
  remove_registered_temp_files();
  write_stderr("tessera: ");
  write_stderr(name_for_handler(signal));
  write_stderr(": stopping at once (temporary files removed)\n");
  ::_exit(stop_exit_code(signal));
}

void on_stop_signal(int signal) {
  if (mode.load() == static_cast<int>(StopMode::at_once)) end_now(signal);
  int none = 0;
  if (!requested.compare_exchange_strong(none, signal)) end_now(signal);  // the second signal
}

}  // namespace

StopSignalHandlers::StopSignalHandlers(StopMode m) {
  mode.store(static_cast<int>(m));
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // Restarted system calls: a signal must not make a write or an MPI call fail.
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < 3; ++i) ::sigaction(stop_signals[i], &action, &previous_[i]);
}

StopSignalHandlers::~StopSignalHandlers() {
  for (int i = 0; i < 3; ++i) ::sigaction(stop_signals[i], &previous_[i], nullptr);
}

int stop_signal() noexcept { return requested.load(); }

void request_stop(int signal) noexcept {
  int none = 0;
  requested.compare_exchange_strong(none, signal);
}

void clear_stop_request() noexcept { requested.store(0); }

int stop_exit_code(int signal) noexcept { return 128 + signal; }

std::string signal_name(int signal) {
  const char* name = name_for_handler(signal);
  return std::strcmp(name, "a stop signal") == 0 ? "signal " + std::to_string(signal) : name;
}

StopSignalsBlocked::StopSignalsBlocked() {
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int s : stop_signals) sigaddset(&blocked, s);
  ::pthread_sigmask(SIG_BLOCK, &blocked, &previous_);
}

StopSignalsBlocked::~StopSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace tessera
