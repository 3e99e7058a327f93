#pragma once
#include <string>
#include <vector>

#include "tessera/core/tensor.hpp"
#include "tessera/parallel/block_copy.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::parallel {

/// Moves a global activation between the blocks of two distributions over the same ranks (e.g.
/// spatial -> sample before CosmoFlow's dense layers) by one MPI_Alltoallv; its gradient is the
/// inverse move. Each rank sends every other rank the intersection of its block under `from`
/// with that rank's block under `to`; its own intersection is copied without MPI. Message
/// buffers are allocated once, at construction.
class Redistribution {
 public:
  /// Moves nothing.
  Redistribution() = default;
  /// `global`: the activation's global shape ([N, H, W, C] or [N, D, H, W, C]), of element
  /// type `type` (the blocks moved hold it; messages carry it). Both grids must be built over
  /// the same group of ranks (the same all() numbering). Throws ConfigError naming `where` when
  /// they are not, ShapeError when `global` does not split (fewer samples, channels or planes than ranks).
  Redistribution(const ProcessGrid& from, const ProcessGrid& to, const Shape& global, const std::string& where,
                 ElementType type = ElementType::fp32);

  /// This rank's block shapes under `from` and `to`.
  const Shape& from_shape() const { return from_shape_; }
  const Shape& to_shape() const { return to_shape_; }

  void forward(const Tensor& from_local, const Tensor& to_local);
  void backward(const Tensor& grad_to_local, const Tensor& grad_from_local);

 private:
  /// The intersection of this rank's block under one grid with a peer's block under the other:
  /// where it lies in this rank's block, and the word where its message starts in a buffer.
  struct Piece {
    Index5 offset{}, extent{};
    int64_t buffer_offset = 0;
  };
  /// The pieces of this rank's block under one grid, exchanged with each peer (none for this
  /// rank), with the Alltoallv counts and displacements of their buffer, in 4-byte words (two
  /// 16-bit values a word).
  struct Side {
    std::vector<Piece> pieces;  // in peer order
    std::vector<int> counts, displacements;
    DeviceView<float> buffer;
    DeviceView<float>::HostMirror host;  // only when the memory space is not host accessible
  };

  /// Packs `src_side`'s pieces of `src`, exchanges them, and unpacks `dst_side`'s pieces into
  /// `dst`; the piece that stays on this rank is copied directly.
  void move(const Tensor& src, Side& src_side, const Index5& self_src_offset, const Tensor& dst, Side& dst_side,
            const Index5& self_dst_offset);
  void require_shape_of(const Tensor& t, const Shape& expected, const char* what) const;

  Communicator group_;
  Shape global_, from_shape_, to_shape_;
  std::string where_;
  ElementType type_ = ElementType::fp32;
  Side from_side_, to_side_;
  /// The part of the global activation in this rank's blocks under both grids.
  Index5 self_from_offset_{}, self_to_offset_{}, self_extent_{};
  bool exchange_ = false;  // whether any rank sends anything
};

}  // namespace tessera::parallel
