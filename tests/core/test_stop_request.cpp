#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <string>
#include <thread>

#include "tessera/core/stop_request.hpp"
#include "tessera/core/temp_file_registry.hpp"

using namespace tessera;

namespace {

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

void touch(const std::string& path) { std::ofstream(path) << "partial"; }

/// Runs `child` in a forked process and returns its wait status. The child only makes
/// async-signal-safe calls, so forking a process with threads is safe here.
template <class F>
int in_child(F child) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    child();
    ::_exit(0);  // the child was expected to end itself through a handler
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("A stop request records its first signal until cleared", "[core][signals]") {
  clear_stop_request();
  CHECK(stop_signal() == 0);
  request_stop(SIGUSR1);
  request_stop(SIGTERM);
  CHECK(stop_signal() == SIGUSR1);
  clear_stop_request();
  CHECK(stop_signal() == 0);
  CHECK(stop_exit_code(SIGTERM) == 143);
  CHECK(stop_exit_code(SIGINT) == 130);
  CHECK(signal_name(SIGUSR1) == "SIGUSR1");
  CHECK(signal_name(SIGHUP) == "signal " + std::to_string(SIGHUP));
}

TEST_CASE("Under the handlers a stop signal only sets the flag, and the old handlers come back", "[core][signals]") {
  clear_stop_request();
  struct sigaction before {};
  ::sigaction(SIGTERM, nullptr, &before);
  {
    const StopSignalHandlers handlers(StopMode::after_step);
    for (int s : {SIGTERM, SIGINT, SIGUSR1}) {
      struct sigaction now {};
      ::sigaction(s, nullptr, &now);
      CHECK(now.sa_handler != before.sa_handler);
    }
    std::raise(SIGUSR1);  // the process goes on
    CHECK(stop_signal() == SIGUSR1);
  }
  struct sigaction after {};
  ::sigaction(SIGTERM, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);
  clear_stop_request();
}

TEST_CASE("A second stop signal exits at once with 128 + signal, removing registered temporary files",
          "[core][signals]") {
  clear_stop_request();
  const std::string tmp = "tessera_stop_test.out.tmp.1", kept = "tessera_stop_test.kept";
  touch(tmp);
  touch(kept);
  int status = 0;
  {
    const TempFileRegistration registration(tmp);
    REQUIRE(registration.registered());
    status = in_child([] {
      const StopSignalHandlers handlers(StopMode::after_step);
      std::raise(SIGINT);
      if (stop_signal() != SIGINT) ::_exit(1);
      std::raise(SIGINT);
      ::_exit(2);  // not reached: the second signal ends the process
    });
  }
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK_FALSE(exists(tmp));
  CHECK(exists(kept));  // only registered files go
  std::remove(kept.c_str());
}

TEST_CASE("In at-once mode the first stop signal exits, removing registered temporary files", "[core][signals]") {
  clear_stop_request();
  const std::string tmp = "tessera_stop_test.h5.tmp.2";
  touch(tmp);
  int status = 0;
  {
    const TempFileRegistration registration(tmp);
    status = in_child([] {
      const StopSignalHandlers handlers(StopMode::at_once);
      std::raise(SIGTERM);
      ::_exit(2);
    });
  }
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 143);
  CHECK_FALSE(exists(tmp));
}

TEST_CASE("Threads started while the stop signals are blocked never receive them", "[core][signals]") {
  sigset_t in_thread;
  sigemptyset(&in_thread);
  {
    const StopSignalsBlocked blocked;
    std::thread([&] { ::pthread_sigmask(SIG_BLOCK, nullptr, &in_thread); }).join();
  }
  CHECK(sigismember(&in_thread, SIGTERM) == 1);
  CHECK(sigismember(&in_thread, SIGINT) == 1);
  CHECK(sigismember(&in_thread, SIGUSR1) == 1);
  sigset_t here;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &here);
  CHECK(sigismember(&here, SIGTERM) == 0);  // the calling thread's mask is restored
}
