#pragma once
#include <cstdint>
#include <vector>

#include "tessera/parallel/communicator.hpp"

namespace tessera::parallel {

/// Point-to-point transfer of host buffers between two ranks of a communicator, in pieces
/// small enough for MPI's int counts, so a model of any size moves in one call. Both sides
/// call the matching function with each other's rank; on a serial communicator nothing moves
/// and a rank exchanging with itself gets its own data back.
///
/// Sizes are sent first and compared: when the two sides hold different amounts, both throw
/// DistError naming the two sizes, so neither waits for bytes that will not come.

/// Sends `mine` to `partner` and returns what `partner` sent (MPI_Sendrecv), same size.
std::vector<float> exchange_floats(const Communicator& comm, int partner, const std::vector<float>& mine,
                                   const char* what);
std::vector<double> exchange_doubles(const Communicator& comm, int partner, const std::vector<double>& mine,
                                     const char* what);
/// One direction: `to` calls send_floats, `from` calls receive_floats with `expected` values.
void send_floats(const Communicator& comm, int to, const std::vector<float>& data, const char* what);
std::vector<float> receive_floats(const Communicator& comm, int from, int64_t expected, const char* what);

}  // namespace tessera::parallel
