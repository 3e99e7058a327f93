#include "tessera/parallel/gradient_reducer.hpp"

#include <algorithm>
#include <chrono>

#include "tessera/core/stop_request.hpp"

namespace tessera::parallel {
namespace {

void scale(const Tensor& t, float factor) {
  const auto v = t.view();
  Kokkos::parallel_for(
      "tessera::scale_gradients", RangePolicy(0, t.numel()), KOKKOS_LAMBDA(const int64_t i) { v(i) *= factor; });
}

// Long enough that an idle poll costs the compute thread sharing its core almost nothing,
// short enough that a shared-memory all-reduce's rounds do not wait on it.
constexpr auto poll_interval = std::chrono::microseconds(100);

}  // namespace

std::vector<int64_t> plan_gradient_buckets(const std::vector<int64_t>& offsets, int64_t bucket_elements) {
  if (offsets.size() < 2) return {0};
  bucket_elements = std::max<int64_t>(bucket_elements, 1);
  std::vector<int64_t> begin;
  int64_t end = offsets.back();
  for (size_t t = offsets.size() - 1; t-- > 0;) {
    // Tensor t joins the open bucket [.., end) unless that would make it too large.
    if (end - offsets[t] > bucket_elements && offsets[t + 1] < end) {
      begin.push_back(offsets[t + 1]);
      end = offsets[t + 1];
    }
  }
  if (begin.empty() || begin.back() != offsets.front()) begin.push_back(offsets.front());
  std::reverse(begin.begin(), begin.end());
  return begin;
}

GradientReducer::GradientReducer(Communicator group, Tensor grads, const std::vector<int64_t>& offsets,
                                 int64_t bucket_elements, bool progress_thread)
    : group_(group), grads_(std::move(grads)) {
  if (offsets.empty() || offsets.front() != 0 || offsets.back() != grads_.numel() ||
      !std::is_sorted(offsets.begin(), offsets.end()))
    throw Error("gradient tensor offsets must run from 0 to the buffer's " + std::to_string(grads_.numel()) +
                " elements in ascending order");
  if (grads_.numel() > 0) begin_ = plan_gradient_buckets(offsets, bucket_elements);
  requests_.assign(begin_.size(), MPI_REQUEST_NULL);
  // Device buffers need a CUDA-aware MPI to be reduced in place asynchronously; without one
  // the whole buffer is staged and reduced in finish().
  overlap_ = !group_.is_serial() && Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
  if (overlap_ && progress_thread && Communicator::thread_multiple()) {
    const StopSignalsBlocked blocked;  // stop signals go to the training thread
    progress_ = std::thread([this] { poll(); });
  }
}

GradientReducer::GradientReducer(Tensor grads, Adasum adasum)
    : group_(adasum.group()), grads_(std::move(grads)), adasum_(std::make_unique<Adasum>(std::move(adasum))) {
  if (adasum_->size() != grads_.numel())
    throw Error("adasum is built for " + std::to_string(adasum_->size()) + " gradients, the buffer holds " +
                std::to_string(grads_.numel()));
}

GradientReducer::~GradientReducer() {
  if (progress_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    progress_.join();
  }
  // An exception mid-step must not leave MPI writing into freed memory.
  for (auto& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
}

void GradientReducer::poll() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return in_flight_ || stopping_; });
    if (stopping_) return;
    test_in_flight();
    lock.unlock();
    std::this_thread::sleep_for(poll_interval);
    lock.lock();
  }
}

void GradientReducer::test_in_flight() {
  // MPI_Test is the call that advances the collectives; an error surfaces in finish()'s wait.
  bool any = false;
  for (auto& r : requests_)
    if (r != MPI_REQUEST_NULL) {
      int done = 0;
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      any = any || !done;
    }
  in_flight_ = any;
}

bool GradientReducer::in_flight() {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_;
}

void GradientReducer::start(size_t bucket) {
  const int64_t end = bucket + 1 < begin_.size() ? begin_[bucket + 1] : grads_.numel();
  group_.start_allreduce_sum(grads_.data() + begin_[bucket], end - begin_[bucket], &requests_[bucket]);
  in_flight_ = true;
}

void GradientReducer::ready_from(int64_t first_final) {
  if (!overlap_) return;
  std::unique_lock<std::mutex> lock(mutex_);
  bool started = false;
  while (next_ < begin_.size()) {
    const size_t bucket = begin_.size() - 1 - next_;
    if (begin_[bucket] < first_final) break;
    if (!started) Kokkos::fence();  // the kernels that wrote these gradients must be done
    started = true;
    start(bucket);
    ++next_;
  }
  if (progress_.joinable()) {
    lock.unlock();
    if (started) wake_.notify_one();
  } else {
    test_in_flight();  // the only chance MPI gets to advance them until the next layer
  }
}

void GradientReducer::finish() {
  const auto t0 = std::chrono::steady_clock::now();
  if (adasum_) {
    // From contributions to the ranks' own mean gradients; the size is a power of two, so
    // the scaling is exact.
    if (!group_.is_serial()) scale(grads_, static_cast<float>(group_.size()));
    adasum_->allreduce(grads_);
  } else if (!overlap_) {
    group_.allreduce_sum(grads_);
  } else {
    ready_from(0);
    std::lock_guard<std::mutex> lock(mutex_);  // the progress thread waits until the next step
    group_.wait_all(static_cast<int>(requests_.size()), requests_.data());
    in_flight_ = false;
  }
  next_ = 0;
  wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tessera::parallel
