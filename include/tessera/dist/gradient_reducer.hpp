#pragma once
#include <cstdint>
#include <vector>

#include "tessera/dist/communicator.hpp"

namespace tessera::dist {

/// Sums a flat gradient buffer over a group in fixed-size buckets. Backprop writes gradients
/// from the end of the buffer towards its start (parameters are laid out in graph order), so
/// each bucket's nonblocking all-reduce starts as soon as backprop has moved past it and the
/// communication overlaps the rest of backprop. Usage per step: ready_from() after each
/// layer's backward, then finish().
class GradientReducer {
 public:
  GradientReducer(Communicator group, Tensor grads, int64_t bucket_elements);
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
};

}  // namespace tessera::dist
