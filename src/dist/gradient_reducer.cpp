#include "tessera/dist/gradient_reducer.hpp"

#include <chrono>

namespace tessera::dist {
namespace {

void scale(const Tensor& t, float factor) {
  const auto v = t.view();
  Kokkos::parallel_for("tessera::scale_gradients", RangePolicy(0, t.numel()),
                       KOKKOS_LAMBDA(const int64_t i) { v(i) *= factor; });
}

}  // namespace

GradientReducer::GradientReducer(Communicator group, Tensor grads, int64_t bucket_elements)
    : group_(group), grads_(std::move(grads)) {
  const int64_t n = grads_.numel();
  for (int64_t b = 0; b < n; b += std::max<int64_t>(bucket_elements, 1)) begin_.push_back(b);
  requests_.assign(begin_.size(), MPI_REQUEST_NULL);
  // Device buffers need a CUDA-aware MPI to be reduced in place asynchronously; without one
  // the whole buffer is staged and reduced in finish().
  overlap_ = !group_.is_serial() && Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
}

GradientReducer::GradientReducer(Tensor grads, Adasum adasum)
    : group_(adasum.group()), grads_(std::move(grads)), adasum_(std::make_unique<Adasum>(std::move(adasum))) {
  if (adasum_->size() != grads_.numel())
    throw Error("adasum is built for " + std::to_string(adasum_->size()) + " gradients, the buffer holds " +
                std::to_string(grads_.numel()));
}

GradientReducer::~GradientReducer() {
  // An exception mid-step must not leave MPI writing into freed memory.
  for (auto& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
}

void GradientReducer::start(size_t bucket) {
  const int64_t end = bucket + 1 < begin_.size() ? begin_[bucket + 1] : grads_.numel();
  group_.start_allreduce_sum(grads_.data() + begin_[bucket], end - begin_[bucket], &requests_[bucket]);
}

void GradientReducer::ready_from(int64_t first_final) {
  if (!overlap_) return;
  bool started = false;
  while (next_ < begin_.size()) {
    const size_t bucket = begin_.size() - 1 - next_;
    if (begin_[bucket] < first_final) break;
    if (!started) Kokkos::fence();  // the kernels that wrote these gradients must be done
    started = true;
    start(bucket);
    ++next_;
  }
  // Without a progress thread, MPI advances nonblocking collectives when it is called.
  for (auto& r : requests_)
    if (r != MPI_REQUEST_NULL) {
      int done = 0;
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
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
    for (auto& r : requests_)
      if (r != MPI_REQUEST_NULL) group_.wait(&r);
  }
  next_ = 0;
  wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tessera::dist
