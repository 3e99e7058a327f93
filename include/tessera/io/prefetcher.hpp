#pragma once
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera::io {

/// A background thread that runs jobs one at a time, in the order they were queued: it reads
/// the next mini-batches while the current one trains. Each job's exception is kept and
/// rethrown by the wait() that claims the job, on the caller's thread, so a read error
/// surfaces where the batch is used, like a synchronous read. Jobs must not launch Kokkos
/// kernels or call MPI (MPI may grant less than MPI_THREAD_MULTIPLE, and the main thread's
/// collectives must stay in the same order on every rank).
class Prefetcher {
 public:
  Prefetcher() = default;
  /// Waits for every queued job, then ends the thread.
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  /// Queues `job` behind the jobs not yet claimed.
  void start(std::function<void()> job);
  /// Claims the oldest queued job: waits until it has run and rethrows its exception (unless
  /// `rethrow` is false). Returns the seconds it waited; 0 when nothing is queued.
  double wait(bool rethrow = true);
  /// Claims every queued job, dropping their errors.
  void discard();
  /// Jobs queued and not yet claimed.
  size_t queued() const;

 private:
  void serve();
  struct Job {
    std::function<void()> run;
    bool started = false, done = false;
    std::exception_ptr error;
  };

  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> jobs_;  // unclaimed, oldest first; the thread runs the first not started
  bool stop_ = false;
};

}  // namespace tessera::io
