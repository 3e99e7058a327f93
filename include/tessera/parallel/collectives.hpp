#pragma once
#include <cstddef>
#include <cstdint>

#include "tessera/core/tensor.hpp"

namespace tessera::parallel {

/// The collectives of channel and gradient exchange over one group of ranks: the seam a
/// transport implements (MPI over a Communicator today, MpiCollectives; NCCL can implement it
/// too), so ChannelExchange and GradientReducer make no MPI call themselves.
///
/// Distributed contract: every rank of the group makes the same calls in the same order with
/// the same counts. Raw pointers are to memory the transport reads and writes directly (host
/// memory for MpiCollectives); a Tensor may live in device memory (staged where needed).
class Collectives {
 public:
  virtual ~Collectives() = default;

  /// Ranks in the group.
  virtual int size() const = 0;
  /// receive[p * count + i] = send[i] of the group's rank p.
  virtual void allgather(const float* send, float* receive, int64_t count) = 0;
  /// receive[i] = Σ over the group's ranks of their send[r * count + i], r this rank: each rank
  /// keeps its slice of the sum of everyone's size() * count values.
  virtual void reduce_scatter_sum(const float* send, float* receive, int64_t count) = 0;
  /// In-place elementwise sum of `t` over the group.
  virtual void allreduce_sum(const Tensor& t) = 0;

  /// Starts a nonblocking in-place sum of `count` values in request slot `slot` (below the
  /// slots the transport was made with; one sum at a time per slot).
  virtual void start_allreduce_sum(float* data, int64_t count, size_t slot) = 0;
  /// Lets the sum in `slot` advance; whether it is done (true when none was started). Errors
  /// surface in wait_all().
  virtual bool test(size_t slot) = 0;
  /// Waits for every sum started.
  virtual void wait_all() = 0;
};

}  // namespace tessera::parallel
