#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/tensor.hpp"
#include "tessera/parallel/block_copy.hpp"
#include "tessera/parallel/halo_account.hpp"
#include "tessera/parallel/halo_plan.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::parallel {

/// Nonblocking neighbour exchange that surrounds a rank's block of a spatially split
/// activation with its neighbours' data, so a convolution or pooling window near the block's
/// edge sees the same values as on the whole sample. Every halo region, edges and corners
/// included, comes straight from the neighbour that owns it (up to 26 messages, each one
/// sub-box), so all messages are posted at once and computation can overlap them. Regions
/// beyond the global boundary hold a boundary value instead. Message buffers are allocated
/// once, at construction. Several exchanges over the same ranks may be in flight together if
/// every rank starts them in the same order (MPI matches messages of equal tags in order).
/// Without an MPI progress thread, large messages move only while MPI is called (progress()
/// and finish_*), so overlapped work should call progress() now and then. Each message also
/// carries the time it was posted, from which account() separates communication from load
/// imbalance (see HaloAccount).
class HaloExchange {
 public:
  /// Nothing to exchange.
  HaloExchange() = default;
  /// `local`: this rank's block shape [N, D, H, W, C] or [N, H, W, C] (the same on every rank
  /// of grid.spatial()). Throws ShapeError naming `where` when a halo is wider than the
  /// neighbouring block it comes from, or has depth widths for a 2D activation.
  HaloExchange(const ProcessGrid& grid, const Shape& local, const HaloWidths& halo, const std::string& where);
  ~HaloExchange();
  HaloExchange(HaloExchange&&) = default;
  HaloExchange& operator=(HaloExchange&&) = default;
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  const Shape& local_shape() const { return local_; }
  /// local + before + after in depth, height and width.
  const Shape& padded_shape() const { return padded_; }
  const HaloWidths& halo() const { return halo_; }

  /// Forward (a copy): the interior of `padded` becomes `local`, each halo region the
  /// neighbours' data, and halo regions beyond the global boundary `boundary_value` (0 for
  /// convolution zero padding, std::numeric_limits<float>::lowest() for max pooling).
  /// start_forward packs and posts the messages and copies the interior without waiting for
  /// any message; finish_forward waits and unpacks. `padded` must stay alive in between.
  void start_forward(const Tensor& local, const Tensor& padded, float boundary_value);
  void finish_forward();
  /// Backward (the exact adjoint of forward): `grad_local` = the interior of `grad_padded`
  /// plus the parts of the neighbours' `grad_padded` halos that cover this rank's block, added
  /// in a fixed order so results are deterministic. Halo regions beyond the global boundary
  /// are dropped.
  void start_backward(const Tensor& grad_padded, const Tensor& grad_local);
  void finish_backward();

  /// Lets messages in flight advance (call it between pieces of overlapped work).
  void progress();
  /// Blocked (in finish_forward/finish_backward), exposed and in-flight time of every
  /// exchange so far.
  const HaloAccount& account() const { return account_; }
  /// Bytes sent to neighbours so far.
  int64_t bytes_sent() const { return bytes_sent_; }

 private:
  /// One message: a sub-box of this rank's block or padded block exchanged with one neighbour,
  /// and where it lies in a message buffer: `count` values, then its post time (stamp_floats).
  struct Message {
    int peer = 0;  // rank in grid.spatial()
    int tag = 0;   // direction of the halo region it fills, seen from the receiver
    Index5 offset{}, extent{};
    int64_t buffer_offset = 0, count = 0;
  };
  /// A halo region beyond the global boundary.
  struct BoundaryRegion {
    Index5 offset{}, extent{};
  };
  /// The requests of messages in flight. Declared first among the members so that a move
  /// assignment waits for them before the buffers they point into are replaced.
  class InFlight {
   public:
    InFlight() = default;
    explicit InFlight(size_t capacity) : requests_(capacity, MPI_REQUEST_NULL) {}
    ~InFlight() { wait_quietly(); }
    InFlight(InFlight&& o) noexcept : requests_(std::move(o.requests_)) { o.requests_.clear(); }
    InFlight& operator=(InFlight&& o) noexcept;
    std::vector<MPI_Request>& requests() { return requests_; }
    /// Waits for every request, ignoring errors (for destructors, where throwing is no option).
    void wait_quietly() noexcept;

   private:
    std::vector<MPI_Request> requests_;
  };
  enum class Phase { idle, forward, backward };

  void require_phase(Phase expected, const char* call) const;
  void require_shape_of(const Tensor& t, const Shape& expected, const char* what) const;
  /// Posts a receive for each of `incoming` into `receive_buffer` and a send for each of
  /// `outgoing` from `send_buffer` (tags offset by `tag_base`), through the host copies when
  /// the buffers are not host accessible.
  void post(const std::vector<Message>& incoming, const DeviceView<float>& receive_buffer,
            const DeviceView<float>::HostMirror& receive_host, const std::vector<Message>& outgoing,
            const DeviceView<float>& send_buffer, const DeviceView<float>::HostMirror& send_host, int tag_base);
  /// Waits for every message, then adds this exchange to account_ from the post times that
  /// `incoming`'s messages carry in `receive` (host memory).
  void wait(const std::vector<Message>& incoming, const float* receive);
  /// The message buffer MPI reads or writes: the host copy where there is one.
  static float* host_data(const DeviceView<float>& buffer, const DeviceView<float>::HostMirror& host);

  InFlight in_flight_;
  Communicator spatial_;
  Shape local_, padded_;
  HaloWidths halo_;
  std::string where_;
  /// Parts of this rank's block that neighbours need for their halos: sent forward, their
  /// gradients received backward.
  std::vector<Message> owned_;
  /// Halo regions of the padded block that neighbours fill: received forward, their gradients
  /// sent backward.
  std::vector<Message> halos_;
  std::vector<BoundaryRegion> boundary_;
  DeviceView<float> owned_buffer_, halo_buffer_;
  /// Host copies of the buffers when the memory space is not host accessible (MPI reads and
  /// writes host memory); empty otherwise.
  DeviceView<float>::HostMirror owned_host_, halo_host_;
  Phase phase_ = Phase::idle;
  Tensor target_;  // the tensor finish_* writes into (kept alive while messages are in flight)
  HaloAccount account_;
  double posted_at_ = 0.0;  // when this rank posted the exchange in flight
  double done_at_ = -1.0;   // when progress() first saw its receives complete; < 0: not yet
  int64_t bytes_sent_ = 0;
};

}  // namespace tessera::parallel
