#include "tessera/parallel/mpi_progress_thread.hpp"

#include <algorithm>
#include <chrono>

#include "tessera/core/stop_request.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::parallel {
namespace {

// Long enough that an idle poll costs the compute thread sharing its core almost nothing,
// short enough that a message in flight (or a shared-memory all-reduce's next round) waits
// at most this long for its next step.
constexpr auto poll_interval = std::chrono::microseconds(100);

}  // namespace

std::shared_ptr<MpiProgressThread> MpiProgressThread::acquire() {
  if (!Communicator::thread_multiple()) return nullptr;
  static std::mutex mutex;
  static std::weak_ptr<MpiProgressThread> current;
  std::lock_guard<std::mutex> lock(mutex);
  auto engine = current.lock();
  if (!engine) {
    engine.reset(new MpiProgressThread());
    current = engine;
  }
  return engine;
}

MpiProgressThread::MpiProgressThread() {
  const StopSignalsBlocked blocked;  // stop signals go to the training thread
  thread_ = std::thread([this] { run(); });
}

MpiProgressThread::~MpiProgressThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void MpiProgressThread::watch(const void* key, std::function<bool()> poll) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.erase(std::remove_if(watched_.begin(), watched_.end(), [&](const Watched& w) { return w.key == key; }),
                   watched_.end());
    watched_.push_back({key, std::move(poll)});
  }
  wake_.notify_one();
}

void MpiProgressThread::forget(const void* key) {
  std::lock_guard<std::mutex> lock(mutex_);
  watched_.erase(std::remove_if(watched_.begin(), watched_.end(), [&](const Watched& w) { return w.key == key; }),
                 watched_.end());
}

void MpiProgressThread::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !watched_.empty(); });
    if (stopping_) return;
    watched_.erase(std::remove_if(watched_.begin(), watched_.end(), [](Watched& w) { return w.poll(); }),
                   watched_.end());
    lock.unlock();
    std::this_thread::sleep_for(poll_interval);
    lock.lock();
  }
}

}  // namespace tessera::parallel
