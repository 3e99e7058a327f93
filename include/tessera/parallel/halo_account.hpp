#pragma once
#include <chrono>

namespace tessera::parallel {

/// Where a rank's time in halo exchanges went, separated from load imbalance without a
/// barrier. Each message carries the time its sender posted it; for one exchange, with
///   posted = the later of this rank's posting and its neighbours' (the earliest the messages
///            could move), waited = when this rank asked for them, done = when it first saw
///            the messages it receives complete (in a progress call or in the wait),
/// the exchange adds
///   blocked   = the time this rank sat in the wait;
///   exposed   = done - max(waited, posted), or 0: communication this rank could not hide;
///   in_flight = done - posted, or 0: how long the messages were on their way.
/// Waiting for a neighbour that had not yet posted (it arrived late) is imbalance, counted in
/// blocked but in neither exposed nor in_flight; so is waiting, after the data arrived, for
/// this rank's sends to complete: without a progress thread a large message's sender learns
/// that it was received only when the receiver calls MPI, i.e. when the neighbour stops
/// computing. Since waited follows this rank's posting, 0 <= exposed <= in_flight, so
/// hidden_fraction() lies in [0, 1] by construction.
/// Clocks are compared across ranks, so the split is exact where they share a clock (ranks of
/// one node); across nodes a clock offset moves time between imbalance and communication,
/// never outside those bounds.
struct HaloAccount {
  double blocked = 0.0, exposed = 0.0, in_flight = 0.0;
  int exchanges = 0;

  /// Blocked time spent waiting for late neighbours.
  double imbalance() const { return blocked > exposed ? blocked - exposed : 0.0; }
  /// 1 - exposed / in_flight: the share of the messages' time on their way that this rank
  /// spent computing; 1 when nothing was in flight.
  double hidden_fraction() const { return in_flight > 0.0 ? 1.0 - exposed / in_flight : 1.0; }
  HaloAccount& operator+=(const HaloAccount& o) {
    blocked += o.blocked, exposed += o.exposed, in_flight += o.in_flight, exchanges += o.exchanges;
    return *this;
  }
  HaloAccount operator-(const HaloAccount& o) const {
    return {blocked - o.blocked, exposed - o.exposed, in_flight - o.in_flight, exchanges - o.exchanges};
  }
  /// The clock of the times compared: seconds on the steady clock, which the processes of one
  /// node share (CLOCK_MONOTONIC). Transports stamp their messages with it.
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
};

}  // namespace tessera::parallel
