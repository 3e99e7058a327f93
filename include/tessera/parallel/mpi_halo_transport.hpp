#pragma once
#include <mpi.h>

#include <atomic>
#include <memory>
#include <vector>

#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/halo_transport.hpp"
#include "tessera/parallel/mpi_progress_thread.hpp"

namespace tessera::parallel {

/// HaloTransport over MPI point-to-point messages (MPI_Irecv/MPI_Isend, all posted at once) on
/// host memory: where the default memory space is not host accessible, each buffer has a host
/// copy that MPI reads and writes, staged at post() and deliver(). Where MPI grants
/// MPI_THREAD_MULTIPLE, the process's MpiProgressThread tests the messages in flight from
/// post() until the first wait, so that over a network they move while the caller computes;
/// otherwise large messages move only while the caller is in MPI (progress() and the waits).
class MpiHaloTransport : public HaloTransport {
 public:
  /// Buffers of `owned_count` and `halo_count` floats (messages and their stamps), and room for
  /// `messages` requests (the most one post makes), over the ranks of `group`.
  MpiHaloTransport(Communicator group, int64_t owned_count, int64_t halo_count, size_t messages);
  /// Waits for the messages in flight, so MPI never writes into freed buffers.
  ~MpiHaloTransport() override;
  MpiHaloTransport(const MpiHaloTransport&) = delete;
  MpiHaloTransport& operator=(const MpiHaloTransport&) = delete;

  const DeviceView<float>& buffer(HaloBuffer which) const override { return buffers_[index(which)]; }
  double post(HaloBuffer into, const std::vector<PackedMessage>& receives, HaloBuffer from,
              const std::vector<PackedMessage>& sends) override;
  bool progress() override;
  void wait_receives() override;
  void wait_sends() override;
  double sent_at(const PackedMessage& received) const override;
  void deliver() override;
  /// Whether the process's MpiProgressThread advances this transport's messages.
  bool has_progress_thread() const { return progress_thread_ != nullptr; }

 private:
  static size_t index(HaloBuffer b) { return static_cast<size_t>(b); }
  /// The memory MPI reads or writes for a buffer: its host copy where there is one.
  float* host_data(HaloBuffer which) const;
  /// Tests the last post's messages: true once all are done. On the progress thread, or on the
  /// caller's without one; records when every receive has arrived.
  bool test_in_flight();
  /// Takes the last post's requests back from the progress thread.
  void stop_watching();

  Communicator group_;
  DeviceView<float> buffers_[2];
  /// Host copies of the buffers when the memory space is not host accessible; empty otherwise.
  DeviceView<float>::HostMirror hosts_[2];
  std::vector<MPI_Request> requests_;  // the last post's receives, then its sends
  size_t receives_ = 0, posted_ = 0;   // of the last post
  HaloBuffer into_ = HaloBuffer::halo;
  std::atomic<bool> received_{false};  // every receive of the last post seen complete
  std::shared_ptr<MpiProgressThread> progress_thread_;  // null without MPI_THREAD_MULTIPLE
};

}  // namespace tessera::parallel
