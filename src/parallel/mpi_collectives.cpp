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
    : group_(std::move(group)), requests_(slots, MPI_REQUEST_NULL) {}

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
  group_.start_allreduce_sum(data, count, &requests_.at(slot));
}

bool MpiCollectives::test(size_t slot) {
  MPI_Request& r = requests_.at(slot);
  if (r == MPI_REQUEST_NULL) return true;
  // MPI_Test is the call that advances the collective; an error surfaces in wait_all().
  int done = 0;
  MPI_Test(&r, &done, MPI_STATUS_IGNORE);
  return done != 0;
}

void MpiCollectives::wait_all() {
  // A group of one starts nothing (and may run without MPI initialised).
  if (!group_.is_serial()) group_.wait_all(static_cast<int>(requests_.size()), requests_.data());
}

}  // namespace tessera::parallel
