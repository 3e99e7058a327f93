#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/shape.hpp"
#include "tessera/parallel/block_copy.hpp"
#include "tessera/parallel/distribution.hpp"

namespace tessera::parallel {

/// Halo widths before and after the local block along depth, height and width.
struct HaloWidths {
  std::array<int64_t, 3> before{0, 0, 0}, after{0, 0, 0};

  bool any() const;
  /// "depth 1+1, height 2+0, width 0+1"
  std::string str() const;
};

/// One message of a halo exchange seen from this rank: a box exchanged with the neighbour in
/// `direction`. A send's box lies in this rank's block, a receive's in its padded block.
struct HaloBox {
  std::array<int, 3> direction{0, 0, 0};   // towards the neighbour along depth, height, width: -1, 0 or 1
  std::array<int, 3> peer_index{0, 0, 0};  // the neighbour's spatial index
  int peer = 0;                            // its rank in the spatial group (Distribution::spatial_rank)
  int tag = 0;  // the direction of the halo region it fills, seen from the receiver, numbered 0..26
  Index5 offset{0, 0, 0, 0, 0}, extent{0, 0, 0, 0, 0};

  int64_t count() const { return extent[0] * extent[1] * extent[2] * extent[3] * extent[4]; }
};

/// A halo region beyond the global boundary: it holds a boundary value, not a neighbour's data.
struct BoundaryBox {
  Index5 offset{0, 0, 0, 0, 0}, extent{0, 0, 0, 0, 0};
};

/// What a halo exchange moves for one rank of a spatial grid: per neighbour (up to 26, edges
/// and corners included) the box of this rank's block it sends and the region of its padded
/// block it receives, and the regions beyond the global boundary. A pure value computed from
/// the grid's geometry alone, without MPI, so the cost model and tests can ask it for any rank
/// of any grid; HaloExchange moves the boxes it lists.
///
/// Distributed contract: the plans of all ranks of one grid (same local shape and widths)
/// match: rank r's send to q has the tag, extent and count of q's receive from r (their offsets
/// differ: one lies in r's block, the other in q's padded block), and sends() and receives()
/// are ordered by direction (depth slowest), so a transport that posts them in this order on
/// every rank pairs them by (peer, tag).
class HaloPlan {
 public:
  /// No halo.
  HaloPlan() = default;
  /// The plan of the rank at `spatial_index` when each sample is split by `distribution`
  /// (only depth, height and width matter) into blocks of shape `local` ([N, D, H, W, C] or
  /// [N, H, W, C], the same on every rank). Throws ShapeError naming `where` when a halo is
  /// negative, wider than the neighbouring block it comes from, or has depth widths for a 2D
  /// block.
  HaloPlan(const Distribution& distribution, const std::array<int, 3>& spatial_index, const Shape& local,
           const HaloWidths& halo, const std::string& where);

  const Shape& local_shape() const { return local_; }
  /// local + before + after in depth, height and width.
  const Shape& padded_shape() const { return padded_; }
  const HaloWidths& halo() const { return halo_; }
  /// Where this rank's block lies in its padded block ([0, before..., 0]).
  Index5 interior_offset() const { return {0, halo_.before[0], halo_.before[1], halo_.before[2], 0}; }

  /// The parts of this rank's block that neighbours need for their halos (forward they are
  /// sent; backward the gradients that fell into them come back).
  const std::vector<HaloBox>& sends() const { return sends_; }
  /// The halo regions of the padded block that neighbours fill (forward received; backward
  /// their gradients are sent back).
  const std::vector<HaloBox>& receives() const { return receives_; }
  const std::vector<BoundaryBox>& boundary() const { return boundary_; }

  /// Elements one forward exchange sends and receives (backward: the other way round).
  int64_t elements_sent() const { return elements_sent_; }
  int64_t elements_received() const { return elements_received_; }
  /// The bytes of the elements sent and received, in `type`.
  int64_t bytes_sent(ElementType type = ElementType::fp32) const {
    return elements_sent_ * static_cast<int64_t>(element_size(type));
  }
  int64_t bytes_received(ElementType type = ElementType::fp32) const {
    return elements_received_ * static_cast<int64_t>(element_size(type));
  }
  /// Messages of one exchange, sends and receives.
  size_t messages() const { return sends_.size() + receives_.size(); }

 private:
  void validate(const Distribution& distribution, const std::string& where) const;
  /// Adds the messages and boundary region towards `direction`.
  void add_direction(const Distribution& distribution, const std::array<int, 3>& spatial_index,
                     const std::array<int, 3>& direction);

  Shape local_, padded_;
  HaloWidths halo_;
  std::vector<HaloBox> sends_, receives_;
  std::vector<BoundaryBox> boundary_;
  int64_t elements_sent_ = 0, elements_received_ = 0;
};

}  // namespace tessera::parallel
