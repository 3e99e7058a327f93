#include "tessera/parallel/peer_exchange.hpp"

#include <algorithm>
#include <string>

namespace tessera::parallel {
namespace {

// Below INT_MAX bytes as well as elements: some MPI implementations count bytes in an int.
constexpr int64_t kPieceBytes = int64_t{1} << 30;
constexpr int kSizeTag = 7301, kDataTag = 7302;

void check_same_size(const Communicator& comm, int partner, int64_t mine, const char* what) {
  int64_t theirs = 0;
  check_mpi(MPI_Sendrecv(&mine, 1, MPI_INT64_T, partner, kSizeTag, &theirs, 1, MPI_INT64_T, partner, kSizeTag,
                         comm.handle(), MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
  if (mine != theirs)
    throw DistError(std::string(what) + ": this rank holds " + std::to_string(mine) + " values, its partner (rank " +
                    std::to_string(partner) + ") " + std::to_string(theirs) + ": the two are not the same model");
}

template <class T>
std::vector<T> exchange(const Communicator& comm, int partner, const std::vector<T>& mine, MPI_Datatype type,
                        const char* what) {
  if (comm.is_serial() || partner == comm.rank()) return mine;
  check_same_size(comm, partner, static_cast<int64_t>(mine.size()), what);
  std::vector<T> theirs(mine.size());
  const int64_t piece = kPieceBytes / static_cast<int64_t>(sizeof(T));
  for (int64_t at = 0; at < static_cast<int64_t>(mine.size()); at += piece) {
    const int n = static_cast<int>(std::min<int64_t>(piece, static_cast<int64_t>(mine.size()) - at));
    check_mpi(MPI_Sendrecv(mine.data() + at, n, type, partner, kDataTag, theirs.data() + at, n, type, partner, kDataTag,
                           comm.handle(), MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
  }
  return theirs;
}

}  // namespace

std::vector<float> exchange_floats(const Communicator& comm, int partner, const std::vector<float>& mine,
                                   const char* what) {
  return exchange(comm, partner, mine, MPI_FLOAT, what);
}

std::vector<double> exchange_doubles(const Communicator& comm, int partner, const std::vector<double>& mine,
                                     const char* what) {
  return exchange(comm, partner, mine, MPI_DOUBLE, what);
}

void send_floats(const Communicator& comm, int to, const std::vector<float>& data, const char* what) {
  if (comm.is_serial() || to == comm.rank()) return;
  const auto size = static_cast<int64_t>(data.size());
  check_mpi(MPI_Send(&size, 1, MPI_INT64_T, to, kSizeTag, comm.handle()), "MPI_Send");
  int64_t accepted = 0;  // the receiver's answer: whether it expected this many
  check_mpi(MPI_Recv(&accepted, 1, MPI_INT64_T, to, kSizeTag, comm.handle(), MPI_STATUS_IGNORE), "MPI_Recv");
  if (accepted != size)
    throw DistError(std::string(what) + ": this rank sends " + std::to_string(size) + " values, rank " +
                    std::to_string(to) + " expects " + std::to_string(accepted) + ": the two are not the same model");
  for (int64_t at = 0; at < size; at += kPieceBytes / 4) {
    const int n = static_cast<int>(std::min<int64_t>(kPieceBytes / 4, size - at));
    check_mpi(MPI_Send(data.data() + at, n, MPI_FLOAT, to, kDataTag, comm.handle()), "MPI_Send");
  }
}

std::vector<float> receive_floats(const Communicator& comm, int from, int64_t expected, const char* what) {
  if (comm.is_serial() || from == comm.rank()) throw DistError(std::string(what) + ": no partner to receive from");
  int64_t size = 0;
  check_mpi(MPI_Recv(&size, 1, MPI_INT64_T, from, kSizeTag, comm.handle(), MPI_STATUS_IGNORE), "MPI_Recv");
  check_mpi(MPI_Send(&expected, 1, MPI_INT64_T, from, kSizeTag, comm.handle()), "MPI_Send");
  if (size != expected)
    throw DistError(std::string(what) + ": rank " + std::to_string(from) + " sends " + std::to_string(size) +
                    " values, this rank expects " + std::to_string(expected) + ": the two are not the same model");
  std::vector<float> data(static_cast<size_t>(size));
  for (int64_t at = 0; at < size; at += kPieceBytes / 4) {
    const int n = static_cast<int>(std::min<int64_t>(kPieceBytes / 4, size - at));
    check_mpi(MPI_Recv(data.data() + at, n, MPI_FLOAT, from, kDataTag, comm.handle(), MPI_STATUS_IGNORE), "MPI_Recv");
  }
  return data;
}

}  // namespace tessera::parallel
