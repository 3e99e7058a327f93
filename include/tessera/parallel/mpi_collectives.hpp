#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tessera/parallel/collectives.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::parallel {

/// Collectives over MPI on a Communicator: MPI_Allgather, MPI_Reduce_scatter_block and
/// MPI_Allreduce (a Tensor in device memory staged through the host), MPI_Iallreduce on host
/// memory for the nonblocking sums. A group of one copies or does nothing.
///
/// The nonblocking sums avoid Open MPI's nonblocking all-reduce (libnbc) binomial tree, a
/// reduce then a broadcast that each move the whole buffer through the root, one after the
/// other: it takes that tree for every in-place call and for every group under 4 ranks, so
/// over a network a 2-rank sum took twice the link's time. Instead:
///  * 2 ranks exchange their whole buffers (both directions of the link at once) and each adds
///    the other's values to its own (a + b equals b + a exactly, so both hold the same bits);
///  * 3 or more call MPI_Iallreduce out of place, from a send buffer per slot, where libnbc
///    takes a reduce-scatter and allgather (Rabenseifner's) from 4 ranks up, moving each
///    buffer about twice whatever the group's size.
/// A slot's buffer is allocated on its first sum and reused after.
///
/// Sums may travel in bf16 (`sum_type`, "training.gradient_precision"): each rank rounds its
/// values to bf16 once, the messages carry half the bytes, and the sum is formed in fp32 (2
/// ranks: own rounded values plus the peer's, so both hold the same bits) or, from 3 ranks, by
/// MPI with a bf16 sum operation that adds in fp32 and rounds each partial sum. The caller's
/// fp32 buffer receives the result. allgather and reduce_scatter_sum are unaffected.
class MpiCollectives : public Collectives {
 public:
  /// Over the ranks of `group`, with `slots` request slots for nonblocking sums, the sums
  /// travelling in `sum_type` (fp32 or bf16).
  explicit MpiCollectives(Communicator group, size_t slots = 0, ElementType sum_type = ElementType::fp32);
  /// Waits for the sums in flight, so MPI never writes into freed memory.
  ~MpiCollectives() override;
  MpiCollectives(const MpiCollectives&) = delete;
  MpiCollectives& operator=(const MpiCollectives&) = delete;

  int size() const override { return group_.size(); }
  void allgather(const float* send, float* receive, int64_t count) override;
  void reduce_scatter_sum(const float* send, float* receive, int64_t count) override;
  void allreduce_sum(const Tensor& t) override;
  void start_allreduce_sum(float* data, int64_t count, size_t slot) override;
  bool test(size_t slot) override;
  void wait_all() override;

 private:
  /// Slot `slot`'s two requests (a 2-rank exchange's receive and send; else the sum and null).
  MPI_Request* requests_of(size_t slot) { return &requests_.at(2 * slot); }
  /// Adds a finished 2-rank exchange's received values into the caller's buffer, or widens a
  /// finished bf16 sum into it.
  void add_received(size_t slot);
  /// Starts slot `slot`'s sum of `data` in bf16.
  void start_bf16_sum(float* data, int64_t count, size_t slot);
  /// The blocking sum of a Tensor in bf16 (through host memory).
  void bf16_allreduce_sum(const Tensor& t);

  Communicator group_;
  ElementType sum_type_ = ElementType::fp32;
  std::vector<MPI_Request> requests_;     // two per slot
  std::vector<std::vector<float>> copy_;  // per slot: what the sum in flight sends or receives
  /// Per slot, bf16 sums: this rank's values rounded, and what arrives (the peer's values or
  /// the sum).
  std::vector<std::vector<uint16_t>> half_send_, half_receive_;
  struct Pending {
    float* data = nullptr;  // the caller's values, which the exchange's received ones are added to
    int64_t count = 0;
    bool widen = false;     // bf16 from 3 ranks: data = the received sum, widened
  };
  std::vector<Pending> pending_;  // per slot, for exchanges not yet added
};

}  // namespace tessera::parallel
