#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/dist/adasum.hpp"
#include "tessera/dist/communicator.hpp"

namespace tessera::dist {

/// How the ranks' gradients are combined ("training.gradient_combination").
enum class GradientCombination {
  sum,     // the sum of the ranks' contributions
  adasum,  // Adasum of the ranks' own mean gradients, per parameter tensor
};

/// Combines a flat gradient buffer over a group. Each rank's buffer holds its contribution:
/// the mean gradient of its own samples divided by the group's size (the trainer divides the
/// loss by the global batch), so the contributions sum to the mean gradient of the batch.
///
/// Summing runs in fixed-size buckets. Backprop writes gradients from the end of the buffer
/// towards its start (parameters are laid out in graph order), so each bucket's nonblocking
/// all-reduce starts as soon as backprop has moved past it and the communication overlaps the
/// rest of backprop. Usage per step: ready_from() after each layer's backward, then finish().
///
/// Adasum instead combines the ranks' own mean gradients (size × contribution, Horovod's
/// convention: equal gradients give that gradient back, orthogonal ones their sum). It runs
/// whole in finish(), after backprop: it does not overlap backprop.
class GradientReducer {
 public:
  /// Sums over `group` in buckets of `bucket_elements`.
  GradientReducer(Communicator group, Tensor grads, int64_t bucket_elements);
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

 private:
  void start(size_t bucket);
  Communicator group_;
  Tensor grads_;
  std::vector<int64_t> begin_;   // bucket b covers [begin_[b], begin_[b + 1]) (last: to the end)
  std::vector<MPI_Request> requests_;
  size_t next_ = 0;              // buckets are started from the last one backwards
  double wait_seconds_ = 0.0;
  bool overlap_ = false;         // host memory and several ranks
  std::unique_ptr<Adasum> adasum_;  // set: combine by Adasum instead of summing
};

}  // namespace tessera::dist
