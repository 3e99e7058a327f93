#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "tessera/core/shape.hpp"
#include "tessera/parallel/box.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/distribution.hpp"
#include "tessera/parallel/sample_shares.hpp"
#include "tessera/parallel/spatial_alignment.hpp"

namespace tessera::parallel {

/// The ranks of a group arranged as a grid over (sample, depth, height, width, channel) for one
/// Distribution. Ranks are numbered with the channel index fastest, then width, ..., sample
/// slowest, so a model-parallel (channel) group is consecutive ranks, and the ranks that share a
/// sample come next: launched with consecutive ranks per node, the groups that exchange the
/// most stay inside a node.
///
/// A rank's share of a global activation [N, D, H, W, C] is the contiguous block of samples of
/// its sample index, the box of its spatial index and the contiguous range of channels of its
/// channel index. Samples split as the grid's SampleShares say (shares that differ by at most
/// one, or balanced ones), so any batch of at least one sample per group splits; channels split
/// into ranges that differ by at most one (even_boundary), so any count of at least one per
/// rank splits; space splits as the grid's SpatialAlignment says (blocks that differ by at most
/// one plane, or by a stride's worth where strided layers follow), so any extent with a unit
/// per rank splits.
class ProcessGrid {
 public:
  /// A grid of one rank.
  ProcessGrid() = default;
  /// Throws ConfigError naming `where` when the distribution does not use exactly the ranks
  /// of `group`. `shares` says how
  /// batches split over `group`'s ranks, `alignment` how spatial extents are cut (all grids of
  /// a model hold the same); none: equally, and to the plane.
  ProcessGrid(const Distribution& distribution, Communicator group, const std::string& where,
              std::shared_ptr<SampleShares> shares = nullptr, std::shared_ptr<SpatialAlignment> alignment = nullptr);

  const Distribution& distribution() const { return distribution_; }
  /// Every rank of the grid.
  const Communicator& all() const { return all_; }
  /// The ranks with this rank's sample and channel index: they share each sample (d*h*w ranks).
  const Communicator& spatial() const { return spatial_; }
  /// The ranks with this rank's spatial and channel index: they split the mini-batch (`sample`
  /// ranks).
  const Communicator& samples() const { return samples_; }
  /// The ranks with this rank's sample and spatial index: they split the channels (the
  /// model-parallel group, channel_parts() ranks, ordered by channel index).
  const Communicator& channels() const { return channels_; }
  /// The ranks with this rank's channel index: they hold the same shard of a channel-split
  /// layer's weights, so they sum its gradients and agree on its statistics (all() when the
  /// channels are not split).
  const Communicator& replicas() const { return replicas_; }

  /// Under a 2-D channel split ({"channel": Pc, "filter": Pf}) the channel group is a Pc × Pf
  /// grid: its rank c is row c / Pf (a block of input channels) and column c % Pf (a set of
  /// filters). The ranks of this rank's row, ordered by column; of its column, ordered by row;
  /// and every rank of the grid in its column (they hold the same filters' bias). Serial
  /// communicators otherwise.
  const Communicator& channel_rows() const { return channel_rows_; }
  const Communicator& channel_columns() const { return channel_columns_; }
  const Communicator& filter_replicas() const { return filter_replicas_; }
  int sample_index() const { return sample_index_; }
  /// This rank's position in its channel group, and the group's size.
  int channel_index() const { return channel_index_; }
  int channel_parts() const { return distribution_.channel_parts(); }
  /// This rank's position along depth, height and width.
  const std::array<int, 3>& spatial_index() const { return spatial_index_; }
  /// Ranks along depth, height and width.
  std::array<int, 3> spatial_parts() const { return {distribution_.depth, distribution_.height, distribution_.width}; }
  /// The rank in all() of the given grid position.
  int rank_of(int sample_index, const std::array<int, 3>& spatial_index, int channel_index = 0) const;
  /// The rank in spatial() of a spatial position (the neighbour's rank for halo exchange).
  int spatial_rank_of(const std::array<int, 3>& spatial_index) const;

  /// This rank's part of a sample of spatial size `size`. Throws ShapeError naming `where`,
  /// the dimension and the sizes when a dimension leaves a rank without a block (the same
  /// on every rank).
  Box local_box(const std::array<int64_t, 3>& size, const std::string& where) const;
  /// The part of the rank at `spatial_index` (a neighbour's, for gathers and redistributions).
  Box box_at(const std::array<int, 3>& spatial_index, const std::array<int64_t, 3>& size,
             const std::string& where) const;
  /// How spatial extents are cut; shared by every grid of a model.
  const std::shared_ptr<SpatialAlignment>& alignment() const { return alignment_; }
  /// This rank's samples of a global batch: [first, first + count). Throws ShapeError naming
  /// `where` (on every rank alike) when the batch leaves a sample group without samples.
  int64_t local_batch(int64_t batch, const std::string& where) const;
  int64_t first_sample(int64_t batch, const std::string& where) const;
  /// The samples of sample group `sample_index` of a global batch: [first, first + count).
  int64_t group_batch(int64_t batch, int sample_index) const;
  int64_t group_first_sample(int64_t batch, int sample_index) const;
  /// How batches split over the ranks; shared by every grid of a model.
  const std::shared_ptr<SampleShares>& shares() const { return shares_; }
  /// This rank's channels of `channels`: [first, first + count), ranges that differ by at most
  /// one over the channel group. Throws ShapeError naming `where` when there are fewer
  /// channels than ranks in the group.
  int64_t local_channels(int64_t channels, const std::string& where) const;
  int64_t first_channel(int64_t channels, const std::string& where) const;
  /// The channel count of the rank at `channel_index` of the channel group.
  int64_t channel_count(int64_t channels, int channel_index, const std::string& where) const;
  /// The local shape of a global channels-last activation ([N, C], [N, H, W, C] or
  /// [N, D, H, W, C]); a 2D activation is split over height and width only, and features
  /// ([N, C]) over samples and channels only: the ranks of a spatial group hold copies of them.
  Shape local_shape(const Shape& global, const std::string& where) const;
  /// The whole activation of a global batch of `batch` samples and `channels` channels of
  /// which `local` is a block (the inverse of local_shape). channels 0: the block's channels
  /// times the channel group's size, and space the block's extents times the parts, which only
  /// even splits make right: layers ask Layer::global_shape, which the model tells.
  Shape global_shape(const Shape& local, int64_t batch, int64_t channels = 0) const;

 private:
  Distribution distribution_;
  Communicator all_, spatial_, samples_, channels_, replicas_;
  Communicator channel_rows_, channel_columns_, filter_replicas_;
  std::shared_ptr<SampleShares> shares_ = std::make_shared<SampleShares>(1);
  std::shared_ptr<SpatialAlignment> alignment_ = std::make_shared<SpatialAlignment>();
  int sample_index_ = 0, channel_index_ = 0;
  std::array<int, 3> spatial_index_{0, 0, 0};
};

/// The spatial size (D, H, W) of a channels-last activation of rank 4 (D = 1) or 5.
std::array<int64_t, 3> spatial_size_of(const Shape& activation);

}  // namespace tessera::parallel
