#pragma once
// Bookkeeping for the MPI test programs in tests/parallel: each rank records its failed checks
// with a line naming the case, and every rank exits with the same status.
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string>

#include "tessera/parallel/communicator.hpp"

namespace tessera::testing {

class MpiCheckLog {
 public:
  explicit MpiCheckLog(parallel::Communicator world) : world_(std::move(world)) {}

  void check(bool ok, const std::string& what) {
    ++checks_;
    if (ok) return;
    ++failures_;
    std::printf("rank %d of %d: FAILED %s\n", world_.rank(), world_.size(), what.c_str());
    std::fflush(stdout);
  }

  /// Checks that `f` throws an E whose message contains every one of `parts`.
  template <class E>
  void expect_error(const std::function<void()>& f, std::initializer_list<std::string> parts, const std::string& what) {
    try {
      f();
      check(false, what + ": no error");
    } catch (const E& e) {
      const std::string message = e.what();
      bool all = true;
      for (const auto& p : parts) all = all && message.find(p) != std::string::npos;
      check(all, what + ": message \"" + message + "\"");
    }
  }

  /// A summary from rank 0 and the job's exit status: 0 when no rank failed a check.
  int exit_status(const char* program) {
    int64_t counts[2] = {checks_, failures_};
    world_.allreduce_sum(counts, 2);
    if (world_.rank() == 0)
      std::printf("%s on %d ranks: %lld checks, %lld failed\n", program, world_.size(),
                  static_cast<long long>(counts[0]), static_cast<long long>(counts[1]));
    return counts[1] == 0 && counts[0] > 0 ? 0 : 1;
  }

 private:
  parallel::Communicator world_;
  int64_t checks_ = 0, failures_ = 0;
};

}  // namespace tessera::testing
