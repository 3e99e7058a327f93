#include "tessera/parallel/gradient_reducer.hpp"

#include <algorithm>
#include <chrono>

#include "tessera/parallel/mpi_collectives.hpp"
#include "tessera/parallel/traffic_counter.hpp"

namespace tessera::parallel {
namespace {

void scale(const Tensor& t, float factor) {
  const auto v = t.view();
  Kokkos::parallel_for(
      "tessera::scale_gradients", RangePolicy(0, t.numel()), KOKKOS_LAMBDA(const int64_t i) { v(i) *= factor; });
}

}  // namespace

std::vector<int64_t> plan_gradient_buckets(const std::vector<int64_t>& offsets, int64_t bucket_elements,
                                           const std::vector<int>& group_of) {
  if (offsets.size() < 2) return {0};
  if (!group_of.empty() && group_of.size() + 1 != offsets.size())
    throw Error("gradient buckets: " + std::to_string(group_of.size()) + " tensor groups for " +
                std::to_string(offsets.size() - 1) + " tensors");
  bucket_elements = std::max<int64_t>(bucket_elements, 1);
  std::vector<int64_t> begin;
  int64_t end = offsets.back();
  for (size_t t = offsets.size() - 1; t-- > 0;) {
    const bool other_group = !group_of.empty() && t + 1 < group_of.size() && group_of[t] != group_of[t + 1];
    // Tensor t joins the open bucket [.., end) unless that would make it too large or mix groups.
    if ((other_group || end - offsets[t] > bucket_elements) && offsets[t + 1] < end) {
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
    : GradientReducer(group, std::move(grads), offsets, bucket_elements, {}, progress_thread) {}

GradientReducer::GradientReducer(Communicator group, Tensor grads, const std::vector<int64_t>& offsets,
                                 int64_t bucket_elements, const std::vector<Communicator>& tensor_groups,
                                 bool progress_thread, ElementType sum_type)
    : group_(group), grads_(std::move(grads)), sum_type_(sum_type) {
  if (offsets.empty() || offsets.front() != 0 || offsets.back() != grads_.numel() ||
      !std::is_sorted(offsets.begin(), offsets.end()))
    throw Error("gradient tensor offsets must run from 0 to the buffer's " + std::to_string(grads_.numel()) +
                " elements in ascending order");
  if (!tensor_groups.empty() && tensor_groups.size() + 1 != offsets.size())
    throw Error("gradient reducer: " + std::to_string(tensor_groups.size()) + " tensor groups for " +
                std::to_string(offsets.size() - 1) + " tensors");
  // Tensors of one communicator share an id; every rank numbers them alike because they
  // come from the same layers' grids in the same order.
  groups_.push_back(group_);
  std::vector<int> group_of;
  for (const auto& g : tensor_groups) {
    size_t id = 0;
    while (id < groups_.size() && groups_[id].handle() != g.handle()) ++id;
    if (id == groups_.size()) groups_.push_back(g);
    group_of.push_back(static_cast<int>(id));
  }
  if (grads_.numel() > 0) begin_ = plan_gradient_buckets(offsets, bucket_elements, group_of);
  bucket_group_.assign(begin_.size(), 0);
  for (size_t b = 0, t = 0; b < begin_.size() && !group_of.empty(); ++b) {
    while (offsets[t + 1] <= begin_[b]) ++t;  // the first tensor of bucket b
    bucket_group_[b] = static_cast<size_t>(group_of[t]);
  }
  for (const auto& g : groups_)
    collectives_.push_back(std::make_unique<MpiCollectives>(g, begin_.size(), sum_type_));
  // Device buffers need a CUDA-aware MPI to be reduced in place asynchronously; without one
  // the whole buffer is staged and reduced in finish().
  overlap_ = !group_.is_serial() && Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
  if (overlap_ && progress_thread) progress_thread_ = MpiProgressThread::acquire();
}

GradientReducer::GradientReducer(Tensor grads, Adasum adasum)
    : group_(adasum.group()), grads_(std::move(grads)), adasum_(std::make_unique<Adasum>(std::move(adasum))) {
  if (adasum_->size() != grads_.numel())
    throw Error("adasum is built for " + std::to_string(adasum_->size()) + " gradients, the buffer holds " +
                std::to_string(grads_.numel()));
}

GradientReducer::~GradientReducer() {
  if (progress_thread_) progress_thread_->forget(this);
  // An exception mid-step must not leave MPI writing into freed memory: destroying the
  // collectives waits for their sums in flight.
  collectives_.clear();
}

void GradientReducer::count_allreduce(const Collectives& group, int64_t elements) const {
  // A ring all-reduce's share of B bytes over P ranks: 2(P − 1)/P · B.
  const double p = group.size();
  TrafficCounter::add(TrafficCounter::gradients, 2.0 * (p - 1.0) / p * static_cast<double>(element_size(sum_type_)) *
                                                     static_cast<double>(elements));
}

void GradientReducer::watch_in_flight() {
  progress_thread_->watch(this, [this] {
    std::lock_guard<std::mutex> lock(mutex_);
    test_in_flight();
    return !in_flight_;
  });
}

void GradientReducer::test_in_flight() {
  // Testing is what advances the collectives; an error surfaces in finish()'s wait.
  bool any = false;
  for (size_t b = 0; b < begin_.size(); ++b)
    if (!collectives_[bucket_group_[b]]->test(b)) any = true;
  in_flight_ = any;
}

bool GradientReducer::in_flight() {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_;
}

void GradientReducer::start(size_t bucket) {
  const int64_t end = bucket + 1 < begin_.size() ? begin_[bucket + 1] : grads_.numel();
  Collectives& group = *collectives_[bucket_group_[bucket]];
  count_allreduce(group, end - begin_[bucket]);
  group.start_allreduce_sum(grads_.data() + begin_[bucket], end - begin_[bucket], bucket);
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
  if (progress_thread_) {
    lock.unlock();
    if (started) watch_in_flight();
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
  } else if (!overlap_ && groups_.size() == 1) {
    count_allreduce(*collectives_[0], grads_.numel());
    collectives_[0]->allreduce_sum(grads_);
  } else if (!overlap_) {
    for (size_t b = 0; b < begin_.size(); ++b) {
      const int64_t end = b + 1 < begin_.size() ? begin_[b + 1] : grads_.numel();
      Collectives& group = *collectives_[bucket_group_[b]];
      count_allreduce(group, end - begin_[b]);
      group.allreduce_sum(grads_.slice(begin_[b], Shape{end - begin_[b]}));
    }
  } else {
    ready_from(0);
    // The progress thread leaves the buckets alone until the next step starts some.
    if (progress_thread_) progress_thread_->forget(this);
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& group : collectives_) group->wait_all();
    in_flight_ = false;
  }
  next_ = 0;
  wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tessera::parallel
