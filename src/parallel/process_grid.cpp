#include "tessera/parallel/process_grid.hpp"

#include "tessera/core/error.hpp"

namespace tessera::parallel {

std::string Box::str() const {
  std::string s = "[";
  for (int i = 0; i < 3; ++i) {
    const auto k = static_cast<size_t>(i);
    s += std::to_string(offset[k]) + ":" + std::to_string(offset[k] + extent[k]) + (i < 2 ? ", " : "]");
  }
  return s;
}

ProcessGrid::ProcessGrid(const Distribution& distribution, Communicator group, const std::string& where)
    : distribution_(distribution), all_(std::move(group)) {
  const Distribution& d = distribution_;
  if (d.sample < 1 || d.channel < 1 || d.depth < 1 || d.height < 1 || d.width < 1)
    throw ConfigError(where, "distribution " + d.str() + " has a count below 1");
  if (d.channel != 1)
    throw ConfigError(where, "distribution " + d.str() + " splits channels; only sample and spatial splits exist");
  if (d.ranks() != all_.size())
    throw ConfigError(where, "distribution " + d.str() + " needs " + std::to_string(d.ranks()) +
                                 " ranks but the job has " + std::to_string(all_.size()) + "; launch with mpirun -np " +
                                 std::to_string(d.ranks()) + " or change the distribution so its counts multiply to " +
                                 std::to_string(all_.size()));
  const int spatial_ranks = d.depth * d.height * d.width;
  const int r = all_.rank();
  sample_index_ = r / spatial_ranks;
  const int s = r % spatial_ranks;
  spatial_index_ = {s / (d.height * d.width), (s / d.width) % d.height, s % d.width};
  spatial_ = all_.split(sample_index_, s);
  samples_ = all_.split(s, sample_index_);
}

int ProcessGrid::spatial_rank_of(const std::array<int, 3>& i) const {
  return (i[0] * distribution_.height + i[1]) * distribution_.width + i[2];
}

int ProcessGrid::rank_of(int sample_index, const std::array<int, 3>& i) const {
  return sample_index * distribution_.depth * distribution_.height * distribution_.width + spatial_rank_of(i);
}

Box ProcessGrid::local_box(const std::array<int64_t, 3>& size, const std::string& where) const {
  static const char* names[3] = {"depth", "height", "width"};
  const auto parts = spatial_parts();
  Box box;
  for (size_t k = 0; k < 3; ++k) {
    if (size[k] % parts[k] != 0)
      throw ShapeError(where + ": " + names[k] + " " + std::to_string(size[k]) + " does not split evenly over " +
                       std::to_string(parts[k]) + " ranks (distribution " + distribution_.str() + ")");
    box.extent[k] = size[k] / parts[k];
    box.offset[k] = box.extent[k] * spatial_index_[k];
  }
  return box;
}

int64_t ProcessGrid::local_batch(int64_t batch, const std::string& where) const {
  if (batch % distribution_.sample != 0)
    throw ShapeError(where + ": a batch of " + std::to_string(batch) + " samples does not split evenly over " +
                     std::to_string(distribution_.sample) + " sample groups (distribution " + distribution_.str() +
                     ")");
  return batch / distribution_.sample;
}

int64_t ProcessGrid::first_sample(int64_t batch, const std::string& where) const {
  return local_batch(batch, where) * sample_index_;
}

Shape ProcessGrid::local_shape(const Shape& global, const std::string& where) const {
  Shape local = global;
  local[0] = local_batch(global[0], where);
  // Features have no space to split: every rank of a spatial group holds its samples' whole
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

Shape ProcessGrid::global_shape(const Shape& local) const {
  const Distribution& d = distribution_;
  Shape global = local;
  if (global.rank() == 0) return global;
  global[0] *= d.sample;
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
