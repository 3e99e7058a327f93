#pragma once
#include <mpi.h>

#include <vector>

#include "tessera/parallel/collectives.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::parallel {

/// Collectives over MPI on a Communicator: MPI_Allgather, MPI_Reduce_scatter_block and
/// MPI_Allreduce (a Tensor in device memory staged through the host), MPI_Iallreduce on host
/// memory for the nonblocking sums. A group of one copies or does nothing.
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
  Communicator group_;
  std::vector<MPI_Request> requests_;
};

}  // namespace tessera::parallel
