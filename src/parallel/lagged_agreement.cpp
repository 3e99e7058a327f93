#include "tessera/parallel/lagged_agreement.hpp"

namespace tessera::parallel {

LaggedAgreement::~LaggedAgreement() {
  // Reached with a request in flight only when the run is being torn down by an error; the
  // job is aborted then, and MPI owns the request.
  if (request_ != MPI_REQUEST_NULL) MPI_Request_free(&request_);
}

double LaggedAgreement::finish() {
  if (request_ != MPI_REQUEST_NULL) group_.wait(&request_);
  const double agreed = received_;
  received_ = 0.0;
  return agreed;
}

double LaggedAgreement::exchange(double mine) {
  const double previous = finish();
  sent_ = mine;
  if (group_.is_serial()) {
    received_ = mine;  // what the next call returns: a group of one agrees at once
    return previous;
  }
  check_mpi(MPI_Iallreduce(&sent_, &received_, 1, MPI_DOUBLE, MPI_MAX, group_.handle(), &request_), "MPI_Iallreduce");
  return previous;
}

}  // namespace tessera::parallel
