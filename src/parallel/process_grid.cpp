#include "tessera/parallel/process_grid.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/even_split.hpp"

namespace tessera::parallel {

std::string Box::str() const {
  std::string s = "[";
  for (int i = 0; i < 3; ++i) {
    const auto k = static_cast<size_t>(i);
    s += std::to_string(offset[k]) + ":" + std::to_string(offset[k] + extent[k]) + (i < 2 ? ", " : "]");
  }
  return s;
}

ProcessGrid::ProcessGrid(const Distribution& distribution, Communicator group, const std::string& where,
                         std::shared_ptr<SampleShares> shares, std::shared_ptr<SpatialAlignment> alignment)
    : distribution_(distribution),
      all_(std::move(group)),
      shares_(std::move(shares)),
      alignment_(std::move(alignment)) {
  const Distribution& d = distribution_;
  if (d.sample < 1 || d.channel < 1 || d.filter < 1 || d.depth < 1 || d.height < 1 || d.width < 1)
    throw ConfigError(where, "distribution " + d.str() + " has a count below 1");
  if (d.ranks() != all_.size())
    throw ConfigError(where, "distribution " + d.str() + " needs " + std::to_string(d.ranks()) +
                                 " ranks but the job has " + std::to_string(all_.size()) + "; launch with mpirun -np " +
                                 std::to_string(d.ranks()) + " or change the distribution so its counts multiply to " +
                                 std::to_string(all_.size()));
  if (!shares_) shares_ = std::make_shared<SampleShares>(all_.size());
  if (!alignment_) alignment_ = std::make_shared<SpatialAlignment>();
  if (shares_->ranks() != all_.size())
    throw ConfigError(where, "sample shares for " + std::to_string(shares_->ranks()) + " ranks given to a group of " +
                                 std::to_string(all_.size()));
  const int spatial_ranks = d.depth * d.height * d.width, parts = d.channel_parts();
  const int r = all_.rank();
  channel_index_ = r % parts;
  sample_index_ = r / (parts * spatial_ranks);
  const int s = (r / parts) % spatial_ranks;
  spatial_index_ = {s / (d.height * d.width), (s / d.width) % d.height, s % d.width};
  spatial_ = all_.split(sample_index_ * parts + channel_index_, s);
  samples_ = all_.split(s * parts + channel_index_, sample_index_);
  // Every rank builds the same grids in the same order, so skipping these splits when the
  // channels are whole is decided alike on all ranks of the group.
  if (parts > 1) {
    channels_ = all_.split(sample_index_ * spatial_ranks + s, channel_index_);
    replicas_ = all_.split(channel_index_, r);
  } else {
    replicas_ = all_;
  }
  // A 2-D split: rank (i, j) of the Pc × Pf channel group, i = channel_index / Pf.
  if (d.channel > 1 && d.filter > 1) {
    const int i = channel_index_ / d.filter, j = channel_index_ % d.filter;
    channel_rows_ = channels_.split(i, j);
    channel_columns_ = channels_.split(j, i);
    filter_replicas_ = all_.split(j, r);
  }
}

int ProcessGrid::spatial_rank_of(const std::array<int, 3>& i) const { return distribution_.spatial_rank(i); }

int ProcessGrid::rank_of(int sample_index, const std::array<int, 3>& i, int channel_index) const {
  const int spatial_ranks = distribution_.depth * distribution_.height * distribution_.width;
  return (sample_index * spatial_ranks + spatial_rank_of(i)) * distribution_.channel_parts() + channel_index;
}

int64_t ProcessGrid::local_channels(int64_t channels, const std::string& where) const {
  return channel_count(channels, channel_index_, where);
}

int64_t ProcessGrid::first_channel(int64_t channels, const std::string& where) const {
  channel_count(channels, channel_index_, where);
  return even_boundary(channels, distribution_.channel_parts(), channel_index_);
}

int64_t ProcessGrid::channel_count(int64_t channels, int channel_index, const std::string& where) const {
  const int parts = distribution_.channel_parts();
  if (channels < parts)
    throw ShapeError(where + ": " + std::to_string(channels) + " channels cannot split over " + std::to_string(parts) +
                     " ranks, each needs at least one (" + distribution_.channel_split_str() + ", distribution " +
                     distribution_.str() + "; every tensor of a channel or filter split, the layer's input " +
                     "included, is held as slices of its channels)");
  return even_part(channels, parts, channel_index);
}

Box ProcessGrid::local_box(const std::array<int64_t, 3>& size, const std::string& where) const {
  return box_at(spatial_index_, size, where);
}

Box ProcessGrid::box_at(const std::array<int, 3>& index, const std::array<int64_t, 3>& size,
                        const std::string& where) const {
  const auto parts = spatial_parts();
  Box box;
  for (size_t k = 0; k < 3; ++k) {
    if (parts[k] == 1) {
      box.extent[k] = size[k];
      continue;
    }
    // Every rank checks the extent, not only its own block: all throw alike or none does.
    if (!alignment_->fits(k, size[k], parts[k]))
      throw ShapeError(where + ": " + alignment_->explain(k, size[k], parts[k]) + " (distribution " +
                       distribution_.str() + ")");
    box.offset[k] = alignment_->boundary(k, size[k], parts[k], index[k]);
    box.extent[k] = alignment_->boundary(k, size[k], parts[k], index[k] + 1) - box.offset[k];
  }
  return box;
}

int64_t ProcessGrid::group_first_sample(int64_t batch, int sample_index) const {
  return shares_->boundary(batch, sample_index * (all_.size() / distribution_.sample));
}

int64_t ProcessGrid::group_batch(int64_t batch, int sample_index) const {
  return group_first_sample(batch, sample_index + 1) - group_first_sample(batch, sample_index);
}

int64_t ProcessGrid::local_batch(int64_t batch, const std::string& where) const {
  // Every group is checked, not only this rank's: all ranks throw alike or none does.
  for (int s = 0; s < distribution_.sample; ++s)
    if (group_batch(batch, s) < 1)
      throw ShapeError(where + ": a batch of " + std::to_string(batch) + " samples leaves sample group " +
                       std::to_string(s) + " of " + std::to_string(distribution_.sample) +
                       " without a sample (distribution " + distribution_.str() +
                       (shares_->even() ? "" : ", balanced shares") + "); each sample group needs at least one");
  return group_batch(batch, sample_index_);
}

int64_t ProcessGrid::first_sample(int64_t batch, const std::string& where) const {
  local_batch(batch, where);
  return group_first_sample(batch, sample_index_);
}

Shape ProcessGrid::local_shape(const Shape& global, const std::string& where) const {
  Shape local = global;
  local[0] = local_batch(global[0], where);
  if (global.rank() >= 2) local[global.rank() - 1] = local_channels(global[global.rank() - 1], where);
  // Features have no space to split: every rank of a spatial group holds its samples'
  // features (the layers on them run replicated).
  if (global.rank() == 2) return local;
  if (global.rank() == 4 && distribution_.depth != 1)
    throw ShapeError(where + ": a 2D activation " + global.str() + " cannot split over depth (distribution " +
                     distribution_.str() + ")");
  const Box box = local_box(spatial_size_of(global), where);
  // [N, D, H, W, C] takes the box's depth, height and width; [N, H, W, C] its height and width.
  const int first_dim = global.rank() == 5 ? 0 : 1;
  for (int k = first_dim; k < 3; ++k) local[1 + k - first_dim] = box.extent[static_cast<size_t>(k)];
  return local;
}

Shape ProcessGrid::global_shape(const Shape& local, int64_t batch, int64_t channels) const {
  const Distribution& d = distribution_;
  Shape global = local;
  if (global.rank() == 0) return global;
  global[0] = batch;
  if (global.rank() >= 2)
    global[global.rank() - 1] = channels > 0 ? channels : local[local.rank() - 1] * d.channel_parts();
  if (local.rank() == 5) {
    global[1] *= d.depth;
    global[2] *= d.height;
    global[3] *= d.width;
  } else if (local.rank() == 4) {
    global[1] *= d.height;
    global[2] *= d.width;
  }
  return global;
}

std::array<int64_t, 3> spatial_size_of(const Shape& a) {
  if (a.rank() == 5) return {a[1], a[2], a[3]};
  if (a.rank() == 4) return {1, a[1], a[2]};
  throw ShapeError("activation " + a.str() + " has no spatial dimensions");
}

}  // namespace tessera::parallel
