#pragma once
#include <mpi.h>

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
class MpiCollectives : public Collectives {
 public:
  /// Over the ranks of `group`, with `slots` request slots for nonblocking sums.
  explicit MpiCollectives(Communicator group, size_t slots = 0);
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
  /// Adds a finished 2-rank exchange's received values into the caller's buffer.
  void add_received(size_t slot);

  Communicator group_;
  std::vector<MPI_Request> requests_;     // two per slot
  std::vector<std::vector<float>> copy_;  // per slot: what the sum in flight sends or receives
  struct Pending {
    float* data = nullptr;  // the caller's values, which the exchange's received ones are added to
    int64_t count = 0;
  };
  std::vector<Pending> pending_;  // per slot, for 2-rank exchanges not yet added
};

}  // namespace tessera::parallel
