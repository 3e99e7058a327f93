#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace tessera::parallel {

/// Bytes this rank hands to MPI for others, by kind of exchange, counted where the exchange
/// is made (not inside MPI). A collective counts what any algorithm must move out of the rank:
/// an all-gather or reduce-scatter over P ranks (P − 1) slices, an all-reduce of B bytes
/// 2(P − 1)/P · B (a ring's share), an all-to-all or halo exchange the messages to other
/// ranks. The model-parallel benchmark compares these sums with the formulas of
/// docs/parallelism.md.
class TrafficCounter {
 public:
  /// local_learning: what layers with a local rule (bcpnn) sum over the ranks of a batch.
  /// weights: the gathers of sharded weights and the reduce-scatters of their gradients.
  enum Kind { channel = 0, redistribution, halo, gradients, local_learning, weights, kinds };
  static void add(Kind kind, double bytes) {
    auto& c = counts()[static_cast<size_t>(kind)];
    double old = c.load(std::memory_order_relaxed);
    while (!c.compare_exchange_weak(old, old + bytes, std::memory_order_relaxed)) {
    }
  }
  static double bytes(Kind kind) { return counts()[static_cast<size_t>(kind)].load(std::memory_order_relaxed); }
  static const char* name(Kind kind);
  static void reset() {
    for (auto& c : counts()) c.store(0.0, std::memory_order_relaxed);
  }

 private:
  static std::array<std::atomic<double>, kinds>& counts();
};

}  // namespace tessera::parallel
