#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/wait_clock.hpp"

#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "tessera/core/log.hpp"

namespace tessera::parallel {
namespace {

bool mpi_running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

}  // namespace

void check_mpi(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  throw DistError(std::string(call) + " failed on rank " + std::to_string(rank) + ": " + std::string(text, length));
}

namespace {

void check(int status, const char* call) { check_mpi(status, call); }

/// check() of a call that may wait for other ranks: its time goes to this thread's WaitClock.
template <class Call>
void waited(Call&& call, const char* name) {
  const WaitClock::Scope waiting;
  check(call(), name);
}

/// MPI counts are int; longer buffers go in pieces.
template <class T>
void allreduce_in_pieces(MPI_Comm comm, T* data, int64_t count, MPI_Datatype type) {
  constexpr int64_t piece = std::numeric_limits<int>::max() / 2;
  for (int64_t offset = 0; offset < count; offset += piece) {
    const int n = static_cast<int>(std::min(piece, count - offset));
    waited([&] { return MPI_Allreduce(MPI_IN_PLACE, data + offset, n, type, MPI_SUM, comm); }, "MPI_Allreduce");
  }
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  // Errors come back as codes (turned into DistError) instead of aborting inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  log::set_rank(rank);
}

MpiSession::~MpiSession() {
  if (mpi_running()) MPI_Finalize();
}

Communicator Communicator::world() {
  if (!mpi_running()) return Communicator(MPI_COMM_NULL, 0, 1);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return Communicator(MPI_COMM_WORLD, rank, size);
}

Communicator Communicator::self() { return Communicator(MPI_COMM_NULL, 0, 1); }

bool Communicator::thread_multiple() {
  if (!mpi_running()) return false;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided == MPI_THREAD_MULTIPLE;
}

void Communicator::allreduce_sum(const Tensor& t) const {
  if (is_serial() || t.numel() == 0) return;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) {
    Kokkos::fence();
    allreduce_in_pieces(comm_, t.data(), t.numel(), MPI_FLOAT);
  } else {
    std::vector<float> host = t.to_host();
    allreduce_in_pieces(comm_, host.data(), static_cast<int64_t>(host.size()), MPI_FLOAT);
    t.copy_from_host(host);
  }
}

void Communicator::allreduce_sum(double* data, int64_t count) const {
  if (!is_serial()) allreduce_in_pieces(comm_, data, count, MPI_DOUBLE);
}

void Communicator::allreduce_sum(int64_t* data, int64_t count) const {
  if (!is_serial()) allreduce_in_pieces(comm_, data, count, MPI_INT64_T);
}

void Communicator::allreduce_max(double* data, int64_t count) const {
  if (is_serial()) return;
  if (count > std::numeric_limits<int>::max())
    throw DistError("all-reduce of " + std::to_string(count) + " values is too large");
  waited([&] { return MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_DOUBLE, MPI_MAX, comm_); }, "MPI_Allreduce");
}

void Communicator::start_allreduce_sum(const float* send, float* receive, int64_t count, MPI_Request* request) const {
  if (count > std::numeric_limits<int>::max())
    throw DistError("all-reduce bucket of " + std::to_string(count) + " floats is too large");
  check(MPI_Iallreduce(send, receive, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm_, request),
        "MPI_Iallreduce");
}

void Communicator::wait(MPI_Request* request) const { waited([&] { return MPI_Wait(request, MPI_STATUS_IGNORE); }, "MPI_Wait"); }

void Communicator::wait_all(int count, MPI_Request* requests) const {
  if (count > 0) waited([&] { return MPI_Waitall(count, requests, MPI_STATUSES_IGNORE); }, "MPI_Waitall");
}

void Communicator::barrier() const {
  if (!is_serial()) waited([&] { return MPI_Barrier(comm_); }, "MPI_Barrier");
}

Communicator Communicator::split(int color, int key) const {
  if (comm_ == MPI_COMM_NULL) return Communicator(MPI_COMM_NULL, 0, 1);
  MPI_Comm part = MPI_COMM_NULL;
  check(MPI_Comm_split(comm_, color, key, &part), "MPI_Comm_split");
  check(MPI_Comm_set_errhandler(part, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  int rank = 0, size = 1;
  MPI_Comm_rank(part, &rank);
  MPI_Comm_size(part, &size);
  Communicator c(part, rank, size);
  // Freed with its last copy, unless MPI has already been finalised (a communicator kept
  // alive past MpiSession, e.g. in a static, is then released by MPI itself).
  c.owner_ = std::shared_ptr<void>(new MPI_Comm(part), [](void* p) {
    auto* comm = static_cast<MPI_Comm*>(p);
    if (mpi_running()) MPI_Comm_free(comm);
    delete comm;
  });
  return c;
}

int handle_fatal_error(const std::exception& e) {
  std::string message = e.what();
  // Kokkos reports a failed allocation with the tensor's label; say what to do about it.
  if (dynamic_cast<const std::bad_alloc*>(&e) || message.find("failed to allocate") != std::string::npos)
    message = "out of memory on this rank: " + message +
              "\n  (split each sample over more ranks with a spatial \"distribution\", e.g. {\"depth\": 2, "
              "\"height\": 2, \"width\": 2} on 8 ranks, or use a smaller batch or sample size)";
  log::error(message);
  if (mpi_running()) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 1;
}

namespace {

/// MPI counts are int: a larger count is refused, naming the call.
int count_of(int64_t count, const char* call) {
  if (count < 0 || count > std::numeric_limits<int>::max())
    throw DistError(std::string(call) + " of " + std::to_string(count) + " elements is too large");
  return static_cast<int>(count);
}

}  // namespace

std::vector<double> Communicator::allgather(double value) const {
  std::vector<double> all(static_cast<size_t>(size_), value);
  if (!is_serial()) waited([&] { return MPI_Allgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm_); }, "MPI_Allgather");
  return all;
}

void Communicator::allreduce_sum(float* data, int64_t count) const {
  if (!is_serial()) allreduce_in_pieces(comm_, data, count, MPI_FLOAT);
}

void Communicator::send_bytes(const void* data, int64_t bytes, int peer, int tag) const {
  if (is_serial()) throw DistError("a send needs a peer: this group has one rank");
  waited([&] { return MPI_Send(data, count_of(bytes, "MPI_Send"), MPI_BYTE, peer, tag, comm_); }, "MPI_Send");
}

void Communicator::recv_bytes(void* data, int64_t bytes, int peer, int tag) const {
  if (is_serial()) throw DistError("a receive needs a peer: this group has one rank");
  waited([&] { return MPI_Recv(data, count_of(bytes, "MPI_Recv"), MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE); }, "MPI_Recv");
}

void Communicator::allgather_bytes(const void* send, void* recv, int64_t bytes) const {
  const int n = count_of(bytes, "MPI_Allgather");
  if (is_serial()) {
    std::memcpy(recv, send, static_cast<size_t>(n));
    return;
  }
  waited([&] { return MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm_); }, "MPI_Allgather");
}

void Communicator::alltoall_bytes(const void* send, void* recv, int64_t bytes) const {
  const int n = count_of(bytes, "MPI_Alltoall");
  if (is_serial()) {
    std::memcpy(recv, send, static_cast<size_t>(n));
    return;
  }
  waited([&] { return MPI_Alltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm_); }, "MPI_Alltoall");
}

void Communicator::reduce_scatter_sum(const float* send, float* recv, int64_t count) const {
  const int n = count_of(count, "MPI_Reduce_scatter_block");
  if (is_serial()) {
    std::memcpy(recv, send, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  waited([&] { return MPI_Reduce_scatter_block(send, recv, n, MPI_FLOAT, MPI_SUM, comm_); }, "MPI_Reduce_scatter_block");
}

}  // namespace tessera::parallel
