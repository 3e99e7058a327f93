#pragma once
#include <cstdint>
#include <vector>

#include "tessera/core/tensor.hpp"

namespace tessera::parallel {

/// One message as a transport moves it: `count` 4-byte words from word `offset` of a packed
/// buffer, then HaloTransport::stamp_floats words of room for its post time; to or from `peer`
/// (a rank of the exchange's group) under `tag`. The words hold values of the exchange's
/// element type (two 16-bit values a word); a transport moves them without reading them.
struct PackedMessage {
  int peer = 0;
  int tag = 0;
  int64_t offset = 0, count = 0;
};

/// The two packed buffers of a halo exchange: the parts of this rank's block its neighbours
/// need (`owned`) and the halo regions they fill (`halo`). Forward sends from owned into halo,
/// backward from halo into owned.
enum class HaloBuffer { owned = 0, halo = 1 };

/// How a halo exchange's packed messages travel between ranks: the seam between HaloExchange
/// (the plan, packing, accounting) and the transport (MPI through host buffers today; CUDA-aware
/// MPI, NCCL or NVSHMEM can implement it too). The transport allocates the packed buffers
/// because some transports need them in memory of their own (NVSHMEM's symmetric heap).
///
/// Distributed contract: every rank of the group posts its exchanges in the same order, and
/// messages pair by (peer, tag) in posting order, so several exchanges over the same ranks
/// may be in flight on distinct transports. Each message carries after its values the time
/// its sender posted it (HaloAccount::now()), which sent_at() reads once it has arrived.
class HaloTransport {
 public:
  /// Words of room after each message for its sender's post time (a double).
  static constexpr int64_t stamp_floats = sizeof(double) / sizeof(float);

  virtual ~HaloTransport() = default;

  /// The packed buffer of words in the default memory space that packing kernels write and
  /// unpacking kernels read (allocated once, at construction).
  virtual const DeviceView<float>& buffer(HaloBuffer which) const = 0;
  /// Posts a receive into `into` for each of `receives` and a send from `from` for each of
  /// `sends`, all at once, once the kernels that packed `from` (and the last unpacking of
  /// `into`) are done. Returns when this rank posted: the time its sends carry.
  virtual double post(HaloBuffer into, const std::vector<PackedMessage>& receives, HaloBuffer from,
                      const std::vector<PackedMessage>& sends) = 0;
  /// Lets the messages in flight advance (between pieces of overlapped work). Returns whether
  /// every receive of the last post has arrived.
  virtual bool progress() = 0;
  /// Waits for the receives of the last post, then for its sends.
  virtual void wait_receives() = 0;
  virtual void wait_sends() = 0;
  /// When the sender of an arrived message (one of the last post's receives) posted it.
  virtual double sent_at(const PackedMessage& received) const = 0;
  /// Makes the arrived values visible to kernels in buffer(into) of the last post (a
  /// host-staged transport copies them to the device here).
  virtual void deliver() = 0;
};

}  // namespace tessera::parallel
