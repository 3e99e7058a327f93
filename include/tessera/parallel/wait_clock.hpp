#pragma once
#include <chrono>

namespace tessera::parallel {

/// Seconds the calling thread has spent inside blocking MPI calls (collectives, waits,
/// blocking sends and receives): time in which a rank may be waiting for slower ranks rather
/// than working. Measured balance subtracts it from a step's time to see a rank's own speed,
/// which a synchronised batch norm or a halo exchange would otherwise level across ranks. Kept
/// per thread: the progress thread's polling is not the trainer's wait.
class WaitClock {
 public:
  /// This thread's total so far.
  static double seconds();

  /// Adds the time from its construction to its destruction to this thread's total; placed
  /// around each blocking call.
  class Scope {
   public:
    Scope() : start_(std::chrono::steady_clock::now()) {}
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::chrono::steady_clock::time_point start_;
  };
};

}  // namespace tessera::parallel
