#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/shape.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::layers {

/// Which part of a whole parameter one rank holds when a layer's weights are split over ranks
/// (model parallelism): along each split dimension (`axes`, one or two) a set of the whole
/// parameter's indices, ascending; whole along the others. The members of `group` hold the
/// other parts (member q holds held[q]; this rank is member `index`) and together hold every
/// element once; the ranks of `replicas` hold this same part, so its gradient sums over them
/// and not over the whole job. A parameter that is not split has no axes and is replicated on
/// every rank of the trainer.
///
/// A 1-D channel or filter split holds slice `index` of `parts` consecutive slices along one
/// axis that differ by at most one (even_boundary); a 2-D split ({"channel": Pc, "filter": Pf},
/// ChannelSplit) holds a block: a range of input channels and, along the output channels, the
/// union of Pc such ranges.
///
/// Sharded weights (ShardedWeight) split each block further: member q then holds only a run of
/// its block's elements in row-major order, [run_first[q], run_first[q] + run_count[q]), as a
/// flat part [run_count[q]].
struct ParameterShard {
  Shape whole;  // the parameter's whole shape
  std::vector<int> axes;
  std::vector<std::vector<std::vector<int64_t>>> held;  // [member][axis of `axes`] → whole indices
  std::vector<int64_t> run_first, run_count;            // per member; empty: whole blocks
  int index = 0;
  parallel::Communicator group, replicas;

  /// The slice of `whole` along `axis` that this rank holds under `grid`'s channel split over
  /// its whole channel group (the whole parameter when the grid does not split channels or
  /// `axis` is −1). Throws ShapeError naming `where` (the layer), the channels and the split
  /// when there are fewer channels than ranks.
  static ParameterShard of(const parallel::ProcessGrid& grid, const Shape& whole, int axis, const std::string& where);
  /// Slice `index` of `parts` consecutive slices of `whole` along `axis` that differ by at most
  /// one, without communicators (for tests and tools that weigh shards without ranks).
  static ParameterShard slices(const Shape& whole, int axis, int parts, int index);
  /// The consecutive indices [first, first + count).
  static std::vector<int64_t> range(int64_t first, int64_t count);

  bool split() const { return !axes.empty() || !run_count.empty(); }
  int parts() const { return static_cast<int>(std::max(held.size(), run_count.size())); }
  /// The shape of member q's part (this rank's: local_shape). Throws ShapeError naming `where`
  /// when a member would hold nothing along a split dimension.
  Shape member_shape(int q, const std::string& where) const;
  /// The shape of member q's block: its part, unless it holds a run of the block.
  Shape member_block_shape(int q, const std::string& where) const;
  Shape local_shape(const std::string& where) const { return member_shape(index, where); }
  /// The flat (row-major) index in the whole parameter of element `i` of member q's part.
  int64_t member_whole_index(int q, int64_t i) const;
  int64_t whole_index(int64_t i) const { return member_whole_index(index, i); }
  /// The whole parameter from every member's part (a collective over `group`; a copy of
  /// `part` when the parameter is not split).
  std::vector<float> gather_whole(const std::vector<float>& part) const;
  /// This rank's part of the whole parameter `whole` (no communication).
  std::vector<float> slice_of(const std::vector<float>& whole) const;
};

}  // namespace tessera::layers
