#include "collective_algorithms.hpp"

namespace tessera::sim {

void allreduce(Messenger& m, const RankGroup& group, double bytes) {
  const int p = group.count, i = group.index_of(m.rank());
  if (p == 1) return;
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  // The first 2*rem members fold in pairs (odd into even) so that a power of two remains.
  int folded = i - rem;
  if (i < 2 * rem) {
    if (i % 2 == 1) {
      m.send_and_wait(group.member(i - 1), bytes);
      folded = -1;
    } else {
      m.receive(group.member(i + 1))->wait();
      folded = i / 2;
    }
  }
  if (folded >= 0) {
    const auto member = [&](int f) { return group.member(f < rem ? 2 * f : f + rem); };
    if (bytes < kShortAllreduceBytes) {
      for (int mask = 1; mask < pof2; mask <<= 1) m.sendrecv(member(folded ^ mask), bytes, member(folded ^ mask));
    } else {
      // Halving from the nearest partner out, as MPICH does: the largest halves go to the
      // neighbours, which consecutive placement puts on the same node.
      double size = bytes;
      for (int mask = 1; mask < pof2; mask <<= 1) {
        size /= 2;
        m.sendrecv(member(folded ^ mask), size, member(folded ^ mask));
      }
      for (int mask = pof2 / 2; mask >= 1; mask >>= 1) {
        m.sendrecv(member(folded ^ mask), size, member(folded ^ mask));
        size *= 2;
      }
    }
  }
  if (i < 2 * rem) {
    if (i % 2 == 1)
      m.receive(group.member(i - 1))->wait();
    else
      m.send_and_wait(group.member(i + 1), bytes);
  }
}

namespace {
/// p - 1 steps, each sending `bytes` to the next member while receiving from the one before.
void ring(Messenger& m, const RankGroup& group, double bytes) {
  const int p = group.count, i = group.index_of(m.rank());
  for (int step = 0; step + 1 < p; ++step) m.sendrecv(group.member((i + 1) % p), bytes, group.member((i + p - 1) % p));
}
}  // namespace

void allgather(Messenger& m, const RankGroup& group, double bytes) { ring(m, group, bytes); }
void reduce_scatter(Messenger& m, const RankGroup& group, double bytes) { ring(m, group, bytes); }

void alltoall(Messenger& m, const RankGroup& group, double bytes) {
  const int p = group.count, i = group.index_of(m.rank());
  for (int k = 1; k < p; ++k) m.sendrecv(group.member((i + k) % p), bytes / p, group.member((i + p - k) % p));
}

}  // namespace tessera::sim
