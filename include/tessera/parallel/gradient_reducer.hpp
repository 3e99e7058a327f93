#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "tessera/parallel/adasum.hpp"
#include "tessera/parallel/collectives.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/mpi_progress_thread.hpp"

namespace tessera::parallel {

/// How the ranks' gradients are combined ("training.gradient_combination").
enum class GradientCombination {
  sum,     // the sum of the ranks' contributions
  adasum,  // Adasum of the ranks' own mean gradients, per parameter tensor
};

/// Splits a gradient buffer of parameter tensors (tensor t covers [offsets[t], offsets[t + 1]))
/// into all-reduce buckets of whole tensors, at most `bucket_elements` each unless one tensor
/// alone is larger. Buckets are filled from the end of the buffer, the order in which backprop
/// finishes them, so the bucket finished last (the first layers') is only as large as what is
/// left over: it is the one no overlap can hide. With `group_of` (one entry per tensor), a
/// bucket never holds tensors of two groups. Returns each bucket's first element, ascending.
std::vector<int64_t> plan_gradient_buckets(const std::vector<int64_t>& offsets, int64_t bucket_elements,
                                           const std::vector<int>& group_of = {});

/// Combines a flat gradient buffer over a group. Each rank's buffer holds its contribution:
/// the mean gradient of its own samples divided by the group's size (the trainer divides the
/// loss by the global batch), so the contributions sum to the mean gradient of the batch.
///
/// Summing runs in buckets (plan_gradient_buckets). Backprop writes gradients from the end of
/// the buffer towards its start (parameters are laid out in graph order), so each bucket's
/// nonblocking all-reduce starts as soon as backprop has moved past it and the communication
/// overlaps the rest of backprop. Usage per step: ready_from() after each layer's backward,
/// then finish().
///
/// MPI libraries such as Open MPI advance a nonblocking collective only while some thread is
/// inside MPI, and a convolution's backward pass makes no MPI call for its whole length. When
/// MPI grants MPI_THREAD_MULTIPLE, the process's MpiProgressThread (the one the halo exchanges
/// use) therefore polls the buckets in flight (sleeping between polls, so it takes little from
/// the compute threads); otherwise they are advanced only between layers.
///
/// Under model parallelism a tensor may be a shard that only some ranks hold: then it is summed
/// over its own group (the ranks holding that shard) instead of the whole group, in buckets
/// of its own.
///
/// Adasum instead combines the ranks' own mean gradients (size × contribution, Horovod's
/// convention: equal gradients give that gradient back, orthogonal ones their sum). It runs
/// whole in finish(), after backprop: it does not overlap backprop.
///
/// The sums go through each group's Collectives (MpiCollectives), bucket b in request slot b.
class GradientReducer {
 public:
  /// Sums over `group` in buckets of whole parameter tensors (`offsets`: each tensor's first
  /// element, then the buffer's size) of at most `bucket_elements`, with a progress thread
  /// if `progress_thread` and MPI allows one.
  GradientReducer(Communicator group, Tensor grads, const std::vector<int64_t>& offsets, int64_t bucket_elements,
                  bool progress_thread = true);
  /// As above, tensor t summed over tensor_groups[t] (a sub-group of `group`: the ranks that
  /// hold the same tensor). Every rank must pass groups that match tensor for tensor. The sums
  /// travel in `sum_type` (fp32, or bf16: half the bytes, each rank's values rounded once; see
  /// MpiCollectives); the buffer stays fp32.
  GradientReducer(Communicator group, Tensor grads, const std::vector<int64_t>& offsets, int64_t bucket_elements,
                  const std::vector<Communicator>& tensor_groups, bool progress_thread = true,
                  ElementType sum_type = ElementType::fp32);
  /// Combines by `adasum` over its group (built for buffers of grads.numel() elements).
  GradientReducer(Tensor grads, Adasum adasum);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  /// Every gradient at index >= first_final is final for this step.
  void ready_from(int64_t first_final);
  /// Starts the buckets not started yet and waits for all of them.
  void finish();
  /// Seconds spent waiting in finish() over all steps (for benchmarks).
  double wait_seconds() const { return wait_seconds_; }
  /// Number of buckets a step is summed in.
  size_t buckets() const { return begin_.size(); }
  /// Whether a progress thread advances the buckets in flight.
  bool has_progress_thread() const { return progress_thread_ != nullptr; }
  /// Whether some started bucket was not yet seen complete (makes no MPI call).
  bool in_flight();

 private:
  void start(size_t bucket);
  /// Counts a sum of `elements` over `group` in the TrafficCounter.
  void count_allreduce(const Collectives& group, int64_t elements) const;
  void test_in_flight();  // with mutex_ held
  /// Hands the buckets in flight to the progress thread (called without mutex_ held: the
  /// thread holds its own lock, then mutex_, while it polls).
  void watch_in_flight();
  Communicator group_;
  Tensor grads_;
  ElementType sum_type_ = ElementType::fp32;
  std::vector<int64_t> begin_;  // bucket b covers [begin_[b], begin_[b + 1]) (last: to the end)
  std::vector<Communicator> groups_;  // distinct groups the buckets sum over
  std::vector<size_t> bucket_group_;  // bucket b sums over groups_[bucket_group_[b]]
  /// collectives_[g] sums over groups_[g]; destroying it waits for its sums in flight.
  std::vector<std::unique_ptr<Collectives>> collectives_;
  size_t next_ = 0;  // buckets are started from the last one backwards
  double wait_seconds_ = 0.0;
  bool overlap_ = false;            // host memory and several ranks
  std::unique_ptr<Adasum> adasum_;  // set: combine by Adasum instead of summing

  // collectives_ is shared with the progress thread: every call on it holds mutex_.
  std::mutex mutex_;
  bool in_flight_ = false;  // some bucket has been started and not yet completed
  std::shared_ptr<MpiProgressThread> progress_thread_;  // null: buckets advance between layers
};

}  // namespace tessera::parallel
