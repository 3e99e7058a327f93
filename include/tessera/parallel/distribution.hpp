#pragma once
#include <array>
#include <string>

namespace tessera::parallel {

/// How a layer's activations are split over a process grid: the number of ranks along the
/// sample, channel, depth, height and width dimensions. A layer learns its place in the
/// grid only from this (and, with MPI, from the communicators of its ProcessGrid).
///
/// `channel` and `filter` both split the activations' channel dimension over a group of ranks
/// (model parallelism, Dryden et al., SC'19); they differ in how a layer with weights computes:
/// under `filter` each rank holds the weights of its share of the output channels and gathers
/// the whole input, under `channel` each rank holds the weights of its share of the input
/// channels and the ranks sum their partial outputs. Both above 1 make a 2-D split of
/// channel × filter ranks (layers::ChannelSplit): each rank holds a block of the weights.
///
/// `shard_weights` ("weights": "sharded") splits a layer's weights further over its replicas,
/// the ranks of the other axes that would each hold a copy (layers::ShardedWeight): it changes
/// where weights live, not the activations' layout. With sample = channel = filter = q it is
/// the 3-D (cube) split of Bian et al. 2021 ("cube": q).
struct Distribution {
  int sample = 1, channel = 1, filter = 1, depth = 1, height = 1, width = 1;
  bool shard_weights = false;

  int ranks() const { return sample * channel * filter * depth * height * width; }
  bool is_serial() const { return ranks() == 1; }
  bool is_spatial() const { return depth * height * width > 1; }
  /// Ranks that split the channel dimension (the model-parallel group).
  int channel_parts() const { return channel * filter; }
  bool splits_channels() const { return channel_parts() > 1; }
  /// The rank in a spatial group (ProcessGrid::spatial()) of the spatial index (d, h, w),
  /// width fastest: pure, so halo plans name their peers without a grid of ranks.
  int spatial_rank(const std::array<int, 3>& index) const { return (index[0] * height + index[1]) * width + index[2]; }
  std::string str() const;
  /// "filter 4", "channel 2", "channel 2 x filter 3": how the channels split, for errors.
  std::string channel_split_str() const;
  /// Whether activations are laid out alike (the weights may live differently).
  bool same_layout(const Distribution& o) const {
    return sample == o.sample && channel == o.channel && filter == o.filter && depth == o.depth && height == o.height &&
           width == o.width;
  }
  bool operator==(const Distribution& o) const { return same_layout(o) && shard_weights == o.shard_weights; }
};

}  // namespace tessera::parallel
