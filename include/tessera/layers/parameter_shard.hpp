#pragma once
#include <cstdint>
#include <vector>

#include "tessera/core/shape.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::layers {

/// Which part of a whole parameter one rank holds when a layer's weights are split over the
/// channel group of its grid (model parallelism): slice `index` of `parts` along dimension
/// `axis` of the whole shape, the slices differing by at most one (even_boundary). The ranks
/// of `group` hold the other slices (ordered by index); the ranks of `replicas` hold this same
/// slice, so its gradient sums over them and not over the whole job. A parameter that is not split has axis −1 and is
/// replicated on every rank of the trainer.
struct ParameterShard {
  int axis = -1;
  int parts = 1, index = 0;
  Shape whole;  // the parameter's whole shape
  parallel::Communicator group, replicas;

  /// The slice of `whole` along `axis` that this rank holds under `grid`'s channel split
  /// (the whole parameter when the grid does not split channels). Throws ShapeError naming
  /// `where` (the layer), the channels and the split when there are fewer channels than ranks.
  static ParameterShard of(const parallel::ProcessGrid& grid, const Shape& whole, int axis, const std::string& where);

  bool split() const { return axis >= 0 && parts > 1; }
  /// The shape of this rank's slice of `whole` (throws ShapeError naming `where` when the
  /// dimension has fewer elements than parts).
  Shape local_shape(const std::string& where) const;
  /// The flat (row-major) index in the whole parameter of element `i` of this rank's slice.
  int64_t whole_index(int64_t i) const;
  /// The whole parameter from every rank's `slice` (a collective over `group`; a copy of
  /// `slice` when the parameter is not split).
  std::vector<float> gather_whole(const std::vector<float>& slice) const;
  /// This rank's slice of the whole parameter `whole` (no communication).
  std::vector<float> slice_of(const std::vector<float>& whole) const;
};

}  // namespace tessera::layers
