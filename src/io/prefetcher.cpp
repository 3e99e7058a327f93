#include "tessera/io/prefetcher.hpp"

#include <chrono>

#include "tessera/core/stop_request.hpp"

namespace tessera::io {

Prefetcher::~Prefetcher() {
  discard();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Prefetcher::start(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.emplace_back();
    jobs_.back().run = std::move(job);
  }
  // The thread starts with the first job, so a dataset that never prefetches has none.
  if (!thread_.joinable()) {
    const StopSignalsBlocked blocked;  // stop signals go to the thread that trains
    thread_ = std::thread([this] { serve(); });
  }
  changed_.notify_all();
}

double Prefetcher::wait(bool rethrow) {
  const auto start = std::chrono::steady_clock::now();
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (jobs_.empty()) return 0.0;
    changed_.wait(lock, [this] { return jobs_.front().done; });
    error = jobs_.front().error;
    jobs_.pop_front();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (error && rethrow) std::rethrow_exception(error);
  return waited;
}

void Prefetcher::discard() {
  while (queued() > 0) wait(false);
}

size_t Prefetcher::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_.size();
}

void Prefetcher::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    Job* next = nullptr;
    changed_.wait(lock, [&] {
      for (auto& job : jobs_)
        if (!job.started) {
          next = &job;
          return true;
        }
      return stop_;
    });
    if (!next) return;  // stopping, nothing left to run
    next->started = true;
    auto run = std::move(next->run);
    lock.unlock();
    std::exception_ptr error;
    try {
      run();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    // A deque keeps the addresses of its elements while only its ends change, and a job is
    // claimed (popped) only once done, so `next` is still this job.
    next->error = error;
    next->done = true;
    changed_.notify_all();
  }
}

}  // namespace tessera::io
