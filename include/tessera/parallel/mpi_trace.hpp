#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessera::parallel {

/// One operation of a traced training step, as the rank that made it saw it: the same kinds
/// as a step schedule's (plan::ScheduleOp, docs/simulation.md), ranks numbered in the job.
struct TracedOp {
  enum class Kind { compute, exchange, allreduce, allreduce_start, wait_all, allgather, reduce_scatter, alltoall };
  Kind kind = Kind::compute;
  int layer = -1;      // index into MpiTrace::Options::layers; -1: the step's own work
  double seconds = 0;  // compute; exchange: compute done between posting its messages and waiting
  double bytes = 0;    // collectives: n as the α-β model defines it (docs/machine_profile.md)
  int first = 0, stride = 1, count = 1;       // collectives: the group, first + k·stride
  std::vector<std::pair<int, double>> sends;  // exchange: (peer, bytes sent to it)
  std::vector<int> receives;                  // exchange: the ranks it receives from
};

/// The steps a trace kept on this rank: each step's operations in order, and its seconds.
struct TracedSteps {
  std::vector<std::vector<TracedOp>> steps;
  std::vector<double> seconds;
};

/// Records what the training thread of this process does in some training steps, as a step
/// schedule holds it (`tessera train --trace`, docs/simulation.md "A real run's trace"): the
/// MPI calls it makes, with their peers, groups and bytes, and the compute between them,
/// attributed to the layer whose forward or backward region (core/profiling.hpp) is open.
///
/// The calls reach it through MPI's profiling interface: the `tessera` program defines the
/// MPI functions Tessera uses (src/cli/mpi_trace_wrappers.cpp), each of which calls its PMPI_
/// twin and, while a trace records, tells this class. So every exchange is seen, whichever part
/// of the code makes it, and programs without those definitions (tests, the Python module) run
/// MPI untouched. Only the thread that started the trace is recorded: the progress thread's
/// tests of requests in flight are not the step's operations.
///
/// How calls become operations: Isend and Irecv open an exchange, which closes at the first
/// wait on one of its requests (compute in between: the exchange's overlapped seconds), or
/// before any other operation; blocking sends, receives and Sendrecv are exchanges of their
/// own; Iallreduce is a gradient bucket started, and a wait on one a wait for all buckets; a
/// barrier is replayed as an allreduce of no bytes. Time inside MPI is not compute: the
/// simulator replays it. Allgatherv counts the largest contribution, Alltoallv what this rank
/// sends. A group that is not strided in the job's ranks cannot be written and is refused.
class MpiTrace {
 public:
  struct Options {
    int64_t skip_steps = 8;  // steps left out first (warm-up, OverlapChoice's alternating steps)
    int64_t steps = 5;       // steps recorded
    std::vector<std::string> layers;  // the model's layer names, in graph order
  };

  /// Starts recording on the calling thread: steps are the "step" regions that thread runs.
  static void start(Options options);
  /// Stops recording; returns the steps recorded in full. Throws when an operation could not be
  /// written as a schedule operation (a group that is not strided).
  static TracedSteps finish();
  /// Whether the calling thread is inside a recorded step (cheap: what every wrapper asks first).
  static bool recording_here();

  // Called by the wrappers, on a recording thread, around the PMPI call (`before` first).
  static void before_call();
  static void after_call();
  static void posted_send(const MPI_Request* request, MPI_Comm comm, int peer, double bytes);
  static void posted_receive(const MPI_Request* request, MPI_Comm comm, int peer);
  static void exchanged(MPI_Comm comm, int send_peer, double send_bytes, int receive_peer);
  static void waited(const MPI_Request* requests, int count);
  static void collective(TracedOp::Kind kind, MPI_Comm comm, double bytes);
  static void started_allreduce(const MPI_Request* request, MPI_Comm comm, double bytes);
};

}  // namespace tessera::parallel
