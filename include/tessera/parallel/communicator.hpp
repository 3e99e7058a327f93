#pragma once
#include <mpi.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/tensor.hpp"

namespace tessera::parallel {

/// An MPI call failed; the message names the call and this process's rank.
class DistError : public Error {
 public:
  using Error::Error;
};

/// Owns MPI's lifetime in a process: initialises it and finalises it at scope exit. It asks
/// for MPI_THREAD_MULTIPLE so that a progress thread may advance nonblocking collectives
/// while the main thread computes (see GradientReducer); with less, only the main thread
/// calls MPI.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

/// A group of ranks that reduce together. Without an initialised MPI (a plain serial run or a
/// unit test) it stands for a group of one and every collective is a no-op, so code never
/// branches on whether it runs under mpirun.
class Communicator {
 public:
  /// A group of one (this rank alone).
  Communicator() = default;
  /// All ranks of the job (a group of one when MPI is not initialised).
  static Communicator world();
  /// This rank alone.
  static Communicator self();
  /// Whether MPI runs with MPI_THREAD_MULTIPLE, so threads may call it concurrently.
  static bool thread_multiple();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_serial() const { return size_ == 1; }

  /// In-place elementwise sum over the group. Device data is staged through the host.
  void allreduce_sum(const Tensor& t) const;
  void allreduce_sum(double* data, int64_t count) const;
  void allreduce_sum(int64_t* data, int64_t count) const;
  /// In-place elementwise maximum over the group.
  void allreduce_max(double* data, int64_t count) const;
  /// Starts a nonblocking sum of `count` host-accessible floats of `send` into `receive`
  /// (count fits in an int; the buffers must not overlap).
  void start_allreduce_sum(const float* send, float* receive, int64_t count, MPI_Request* request) const;
  /// Waits for a request started here; errors become DistError.
  void wait(MPI_Request* request) const;
  /// Waits for all requests (null requests are skipped); errors become DistError.
  void wait_all(int count, MPI_Request* requests) const;
  /// Blocks until every rank of the group arrives.
  void barrier() const;

  /// The ranks of this group with the same `color`, ordered by `key` (collective over the
  /// group). The new communicator is freed when its last copy goes.
  Communicator split(int color, int key) const;
  /// The MPI handle for point-to-point and collective calls of the parallel layer
  /// (MPI_COMM_NULL for a serial group).
  MPI_Comm handle() const { return comm_; }

 private:
  Communicator(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::shared_ptr<void> owner_;  // frees comm_ when it came from split()
  int rank_ = 0, size_ = 1;

 public:
  // What `tessera calibrate` times (plan/collective_timing). On a group of one the collectives
  // copy `send` into `recv`, as MPI's do on one rank, and point-to-point has no peer to reach.

  /// Every rank's `value`, in rank order.
  std::vector<double> allgather(double value) const;
  /// In-place elementwise sum of host floats over the group.
  void allreduce_sum(float* data, int64_t count) const;
  /// Blocking send of `bytes` bytes to rank `peer` of the group, and its matching receive.
  void send_bytes(const void* data, int64_t bytes, int peer, int tag) const;
  void recv_bytes(void* data, int64_t bytes, int peer, int tag) const;
  /// Each rank's `bytes` bytes of `send`, in rank order, into `recv` on every rank.
  void allgather_bytes(const void* send, void* recv, int64_t bytes) const;
  /// `bytes` bytes from `send` to each rank (rank r's at r·bytes); theirs into `recv` alike.
  void alltoall_bytes(const void* send, void* recv, int64_t bytes) const;
  /// The sum over the group of `send` (count floats per rank, size() blocks); this rank's
  /// block of the sum into `recv`.
  void reduce_scatter_sum(const float* send, float* recv, int64_t count) const;
};

/// Throws DistError naming `call` and this rank when an MPI call did not succeed.
void check_mpi(int status, const char* call);

/// The one place a fatal error ends a run: prints it with this rank's number and, when other
/// ranks exist, aborts the whole job so none of them waits forever in a collective.
/// Returns the exit status to use when the job is serial.
int handle_fatal_error(const std::exception& e);

}  // namespace tessera::parallel
