// The MPI functions Tessera calls to move data, defined here through MPI's profiling interface
// so that `tessera train --trace` can record them (parallel::MpiTrace): each calls its PMPI_
// twin, and while a trace records on the calling thread also tells the trace. Part of the
// `tessera` program alone: linked into a library, the definitions would also intercept the
// calls of programs that load it (mpi4py beside the Python module). HDF5's own MPI calls go
// through libhdf5's bindings to libmpi and are not seen: reading data is not in a step schedule.
#include <mpi.h>

#include <algorithm>

#include "tessera/parallel/mpi_trace.hpp"

namespace {

using tessera::parallel::MpiTrace;
using Kind = tessera::parallel::TracedOp::Kind;

double bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return static_cast<double>(count) * size;
}

int size_of(MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  return size;
}

/// Runs `call` (the PMPI function) between the trace's before and after, then `record`.
template <typename Call, typename Record>
int traced(Call call, Record record) {
  MpiTrace::before_call();
  const int status = call();
  if (status == MPI_SUCCESS) record();
  MpiTrace::after_call();
  return status;
}

}  // namespace

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!MpiTrace::recording_here()) return PMPI_Send(buf, count, type, dest, tag, comm);
  return traced([&] { return PMPI_Send(buf, count, type, dest, tag, comm); },
                [&] { MpiTrace::exchanged(comm, dest, bytes_of(count, type), MPI_PROC_NULL); });
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!MpiTrace::recording_here()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  return traced([&] { return PMPI_Recv(buf, count, type, source, tag, comm, status); },
                [&] { MpiTrace::exchanged(comm, MPI_PROC_NULL, 0, source); });
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  const auto call = [&] {
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
  };
  if (!MpiTrace::recording_here()) return call();
  return traced(call, [&] { MpiTrace::exchanged(comm, dest, bytes_of(sendcount, sendtype), source); });
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (!MpiTrace::recording_here()) return PMPI_Isend(buf, count, type, dest, tag, comm, request);
  return traced([&] { return PMPI_Isend(buf, count, type, dest, tag, comm, request); },
                [&] { MpiTrace::posted_send(request, comm, dest, bytes_of(count, type)); });
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  if (!MpiTrace::recording_here()) return PMPI_Irecv(buf, count, type, source, tag, comm, request);
  return traced([&] { return PMPI_Irecv(buf, count, type, source, tag, comm, request); },
                [&] { MpiTrace::posted_receive(request, comm, source); });
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!MpiTrace::recording_here()) return PMPI_Wait(request, status);
  return traced([&] { return PMPI_Wait(request, status); }, [&] { MpiTrace::waited(request, 1); });
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!MpiTrace::recording_here()) return PMPI_Waitall(count, requests, statuses);
  return traced([&] { return PMPI_Waitall(count, requests, statuses); },
                [&] { MpiTrace::waited(requests, count); });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!MpiTrace::recording_here()) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  return traced([&] { return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm); },
                [&] { MpiTrace::collective(Kind::allreduce, comm, bytes_of(count, type)); });
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  if (!MpiTrace::recording_here()) return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  return traced([&] { return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request); },
                [&] { MpiTrace::started_allreduce(request, comm, bytes_of(count, type)); });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  const auto call = [&] { return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); };
  if (!MpiTrace::recording_here()) return call();
  // One rank's contribution; in place it is a block of the receive buffer.
  return traced(call, [&] { MpiTrace::collective(Kind::allgather, comm, bytes_of(recvcount, recvtype)); });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  const auto call = [&] {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  };
  if (!MpiTrace::recording_here()) return call();
  return traced(call, [&] {
    int largest = 0;
    for (int k = 0, n = size_of(comm); k < n; ++k) largest = std::max(largest, recvcounts[k]);
    MpiTrace::collective(Kind::allgather, comm, bytes_of(largest, recvtype));
  });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  if (!MpiTrace::recording_here()) return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  return traced([&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm); },
                [&] { MpiTrace::collective(Kind::reduce_scatter, comm, bytes_of(recvcount, type)); });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  const auto call = [&] { return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); };
  if (!MpiTrace::recording_here()) return call();
  return traced(call, [&] {
    MpiTrace::collective(Kind::alltoall, comm, bytes_of(recvcount, recvtype) * size_of(comm));
  });
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  const auto call = [&] {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  };
  if (!MpiTrace::recording_here()) return call();
  return traced(call, [&] {
    // What this rank sends in all (in place: what it receives, the same exchange mirrored).
    const int* counts = sendbuf == MPI_IN_PLACE ? recvcounts : sendcounts;
    const MPI_Datatype type = sendbuf == MPI_IN_PLACE ? recvtype : sendtype;
    double bytes = 0;
    for (int k = 0, n = size_of(comm); k < n; ++k) bytes += bytes_of(counts[k], type);
    MpiTrace::collective(Kind::alltoall, comm, bytes);
  });
}

int MPI_Barrier(MPI_Comm comm) {
  if (!MpiTrace::recording_here()) return PMPI_Barrier(comm);
  return traced([&] { return PMPI_Barrier(comm); }, [&] { MpiTrace::collective(Kind::allreduce, comm, 0); });
}

}  // extern "C"
