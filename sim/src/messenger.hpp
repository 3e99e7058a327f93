#pragma once
// Point-to-point messages between simulated ranks, as MPI's rendezvous moves them: a transfer
// starts when both its send and its receive are posted, and takes the network's time.
#include <string>
#include <vector>

#include <simgrid/s4u/Comm.hpp>

#include "platform.hpp"

namespace tessera::sim {

/// One rank's sends and receives on one channel. Each ordered pair of ranks has a mailbox per
/// channel, so messages between two ranks match in the order they were posted, as MPI's do
/// on one communicator; a channel stands for a communicator (the step's own, and the one the
/// gradient sums run on behind it).
///
/// A message that leaves its network endpoint first costs the sender the platform's software
/// latency (MPI, staging copies): the network's links carry only what the wire and switches
/// take. Messages between ranks of one endpoint take the within-node link, whose latency is
/// its own.
class Messenger {
 public:
  Messenger(int rank, int channel, const Platform& platform) : rank_(rank), channel_(channel), platform_(platform) {}
  int rank() const { return rank_; }
  /// Pays the software latency when any of `peers` is on another endpoint (once: the messages
  /// of an exchange are posted together).
  void leave_node(const std::vector<int>& peers);
  simgrid::s4u::CommPtr send(int to, double bytes);
  simgrid::s4u::CommPtr receive(int from);
  /// Sends `bytes` to `to` (software latency included) and waits.
  void send_and_wait(int to, double bytes);
  /// Sends `bytes` to `to` while receiving from `from`; returns when both are done.
  void sendrecv(int to, double bytes, int from);
  /// Waits for all of `comms`, then empties the list.
  void wait(std::vector<simgrid::s4u::CommPtr>& comms);

 private:
  std::string mailbox(int from, int to) const;
  int rank_, channel_;
  const Platform& platform_;
  void* received_ = nullptr;  // where receives put the (unused) payload
};

}  // namespace tessera::sim
