#pragma once
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::parallel {

/// A thread that advances nonblocking MPI messages while the threads that posted them compute.
/// MPI libraries such as Open MPI move a large message (a rendezvous: the receiver must answer
/// before the data flows) only while some thread is inside MPI, and an overlapped convolution
/// makes no MPI call for its whole length; over a network the message then waits for the
/// convolution to end and nothing is hidden. Shared by every halo exchange and gradient
/// reducer of the process (one thread, not one per layer); it sleeps between polls, and blocks
/// while nothing is watched, so it takes little from the compute threads.
///
/// Contract: a watched poll runs on this thread, under its lock, until it returns true or is
/// forgotten; once forget() returns it does not run again, so the caller may then touch the
/// requests it tests. A poll must not throw (an error surfaces in the caller's own wait).
class MpiProgressThread {
 public:
  /// The process's progress thread, started for the first holder and stopped when the last
  /// lets it go; null when MPI does not grant MPI_THREAD_MULTIPLE (then messages advance only
  /// in the callers' own MPI calls).
  static std::shared_ptr<MpiProgressThread> acquire();

  ~MpiProgressThread();
  MpiProgressThread(const MpiProgressThread&) = delete;
  MpiProgressThread& operator=(const MpiProgressThread&) = delete;

  /// Polls `poll` every interval until it returns true (done) or forget(key).
  void watch(const void* key, std::function<bool()> poll);
  /// Stops polling `key` (nothing if it is not watched); returns after any poll of it in progress.
  void forget(const void* key);

 private:
  MpiProgressThread();
  void run();

  struct Watched {
    const void* key;
    std::function<bool()> poll;
  };
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Watched> watched_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera::parallel
