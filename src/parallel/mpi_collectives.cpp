#include "tessera/parallel/mpi_collectives.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace tessera::parallel {
namespace {

int int_count(int64_t count, const char* call) {
  if (count > std::numeric_limits<int>::max())
    throw DistError(std::string(call) + " of " + std::to_string(count) + " values is too large");
  return static_cast<int>(count);
}

}  // namespace

MpiCollectives::MpiCollectives(Communicator group, size_t slots)
    : group_(std::move(group)), requests_(2 * slots, MPI_REQUEST_NULL), copy_(slots), pending_(slots) {}

MpiCollectives::~MpiCollectives() {
  // Errors are ignored: a destructor cannot throw, and the job is ending with another error.
  for (auto& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
}

void MpiCollectives::allgather(const float* send, float* receive, int64_t count) {
  if (group_.is_serial()) {
    std::copy(send, send + count, receive);
    return;
  }
  const int n = int_count(count, "MPI_Allgather");
  check_mpi(MPI_Allgather(send, n, MPI_FLOAT, receive, n, MPI_FLOAT, group_.handle()), "MPI_Allgather");
}

void MpiCollectives::reduce_scatter_sum(const float* send, float* receive, int64_t count) {
  group_.reduce_scatter_sum(send, receive, count);
}

void MpiCollectives::allreduce_sum(const Tensor& t) { group_.allreduce_sum(t); }

void MpiCollectives::start_allreduce_sum(float* data, int64_t count, size_t slot) {
  if (group_.is_serial()) return;  // the sum over one rank is its own values
  MPI_Request* r = requests_of(slot);
  if (r[0] != MPI_REQUEST_NULL || r[1] != MPI_REQUEST_NULL || pending_.at(slot).data)
    throw DistError("all-reduce slot " + std::to_string(slot) + " started while its last sum is in flight");
  std::vector<float>& copy = copy_.at(slot);
  if (static_cast<int64_t>(copy.size()) < count) copy.resize(static_cast<size_t>(count));
  if (group_.size() == 2) {
    const int n = int_count(count, "all-reduce exchange"), peer = 1 - group_.rank();
    constexpr int tag = 0x4152;  // "AR": no other message of Tessera's carries it (MPI guarantees tags to 32767)
    check_mpi(MPI_Irecv(copy.data(), n, MPI_FLOAT, peer, tag, group_.handle(), &r[0]), "MPI_Irecv");
    check_mpi(MPI_Isend(data, n, MPI_FLOAT, peer, tag, group_.handle(), &r[1]), "MPI_Isend");
    pending_[slot] = {data, count};
    return;
  }
  std::copy(data, data + count, copy.begin());
  group_.start_allreduce_sum(copy.data(), data, count, &r[0]);
}

void MpiCollectives::add_received(size_t slot) {
  Pending& p = pending_.at(slot);
  if (!p.data) return;
  const float* received = copy_[slot].data();
  for (int64_t i = 0; i < p.count; ++i) p.data[i] += received[i];
  p = Pending{};
}

bool MpiCollectives::test(size_t slot) {
  MPI_Request* r = requests_of(slot);
  if (r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL) {
    add_received(slot);
    return true;
  }
  // MPI_Testall is the call that advances the sum; an error surfaces in wait_all().
  int done = 0;
  MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE);
  if (done) add_received(slot);
  return done != 0;
}

void MpiCollectives::wait_all() {
  // A group of one starts nothing (and may run without MPI initialised).
  if (group_.is_serial()) return;
  group_.wait_all(static_cast<int>(requests_.size()), requests_.data());
  for (size_t slot = 0; slot < pending_.size(); ++slot) add_received(slot);
}

}  // namespace tessera::parallel
