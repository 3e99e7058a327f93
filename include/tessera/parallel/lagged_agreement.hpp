#pragma once
#include <mpi.h>

#include "tessera/parallel/communicator.hpp"

namespace tessera::parallel {

/// The maximum of a value over a group, agreed one call late without blocking the caller on
/// the slowest rank: each call contributes this rank's value to a nonblocking all-reduce and
/// returns the result of the previous call's (0 at the first). Every rank of the group calls
/// the same number of times, so every rank gets the same answer from the same call.
///
/// For what a loop must agree on without lock-stepping its ranks: the trainers of a
/// population agree on a stop request this way every step, so each may run up to one step
/// ahead of the others instead of waiting for the slowest at every step.
class LaggedAgreement {
 public:
  explicit LaggedAgreement(Communicator group) : group_(std::move(group)) {}
  ~LaggedAgreement();
  LaggedAgreement(const LaggedAgreement&) = delete;
  LaggedAgreement& operator=(const LaggedAgreement&) = delete;

  /// Starts agreeing on `mine`; returns the maximum agreed by the previous call.
  double exchange(double mine);
  /// Completes the agreement in flight (collective) and returns it; the next exchange()
  /// starts afresh.
  double finish();

 private:
  Communicator group_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  double sent_ = 0.0, received_ = 0.0;
};

}  // namespace tessera::parallel
