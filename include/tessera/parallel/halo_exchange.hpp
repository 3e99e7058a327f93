#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/tensor.hpp"
#include "tessera/parallel/halo_account.hpp"
#include "tessera/parallel/halo_plan.hpp"
#include "tessera/parallel/halo_transport.hpp"
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
/// Where MPI grants MPI_THREAD_MULTIPLE, the transport's progress thread moves large messages
/// while the caller computes; without one they move only while MPI is called (progress() and
/// finish_*), so overlapped work should call progress() now and then either way. Each message also
/// carries the time it was posted, from which account() separates communication from load
/// imbalance (see HaloAccount).
///
/// It joins a HaloPlan (which boxes go where), a HaloTransport (how they travel: MPI through
/// host buffers, MpiHaloTransport) and the packing, unpacking and accounting between them.
class HaloExchange {
 public:
  /// Nothing to exchange.
  HaloExchange() = default;
  /// `local`: this rank's block shape [N, D, H, W, C] or [N, H, W, C] (the same on every rank
  /// of grid.spatial()), of element type `type`: the tensors exchanged hold it, and the
  /// messages carry it (a bf16 halo moves half the bytes of an fp32 one). Throws ShapeError
  /// naming `where` when a halo is wider than the neighbouring block it comes from, or has
  /// depth widths for a 2D activation.
  HaloExchange(const ProcessGrid& grid, const Shape& local, const HaloWidths& halo, const std::string& where,
               ElementType type = ElementType::fp32);
  HaloExchange(HaloExchange&&) = default;
  HaloExchange& operator=(HaloExchange&&) = default;
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  const Shape& local_shape() const { return plan_.local_shape(); }
  /// local + before + after in depth, height and width.
  const Shape& padded_shape() const { return plan_.padded_shape(); }
  const HaloWidths& halo() const { return plan_.halo(); }
  /// The boxes this rank exchanges with each neighbour.
  const HaloPlan& plan() const { return plan_; }

  /// Forward (a copy): the interior of `padded` becomes `local`, each halo region the
  /// neighbours' data, and halo regions beyond the global boundary `boundary_value` (0 for
  /// convolution zero padding, std::numeric_limits<float>::lowest() for max pooling; in a
  /// 16-bit type the lowest finite value of that type).
  /// start_forward packs and posts the messages and copies the interior without waiting for
  /// any message; finish_forward waits and unpacks. `padded` must stay alive in between.
  void start_forward(const Tensor& local, const Tensor& padded, float boundary_value);
  void finish_forward();
  /// Backward (the exact adjoint of forward): `grad_local` = the interior of `grad_padded`
  /// plus the parts of the neighbours' `grad_padded` halos that cover this rank's block, added
  /// in a fixed order so results are deterministic (each addition in fp32, rounded once into
  /// a 16-bit type). Halo regions beyond the global boundary
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
  enum class Phase { idle, forward, backward };

  void require_phase(Phase expected, const char* call) const;
  void require_shape_of(const Tensor& t, const Shape& expected, const char* what) const;
  /// Each of `boxes` as a message in a packed buffer of words, one after another (values of
  /// type_, then the post stamp), tagged `tag_base` + its tag.
  std::vector<PackedMessage> packed(const std::vector<HaloBox>& boxes, int tag_base) const;
  /// Posts `incoming` into `into` and `outgoing` from `from`, counting the bytes sent.
  void post(HaloBuffer into, const std::vector<PackedMessage>& incoming, HaloBuffer from,
            const std::vector<PackedMessage>& outgoing);
  /// Waits for every message, then adds this exchange to account_ from the post times that
  /// `incoming`'s messages carry.
  void wait(const std::vector<PackedMessage>& incoming);

  HaloPlan plan_;
  std::string where_;
  ElementType type_ = ElementType::fp32;
  /// The plan's sends and receives as messages of the packed buffers: forward owned_ go out
  /// and halos_ come in, backward (tags above every forward tag) the other way round.
  std::vector<PackedMessage> owned_, halos_, owned_back_, halos_back_;
  /// Owns the packed buffers and the messages in flight; destroying or replacing it waits for
  /// them, so they never outlive the buffers they read and write. Null: nothing to exchange.
  std::unique_ptr<HaloTransport> transport_;
  Phase phase_ = Phase::idle;
  Tensor target_;  // the tensor finish_* writes into (kept alive while messages are in flight)
  HaloAccount account_;
  double posted_at_ = 0.0;  // when this rank posted the exchange in flight
  double done_at_ = -1.0;   // when progress() first saw its receives complete; < 0: not yet
  int64_t bytes_sent_ = 0;
};

}  // namespace tessera::parallel
