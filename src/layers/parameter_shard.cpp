#include "tessera/layers/parameter_shard.hpp"

#include "tessera/core/error.hpp"
#include "tessera/layers/shard_index.hpp"

namespace tessera::layers {

ParameterShard ParameterShard::of(const parallel::ProcessGrid& grid, const Shape& whole, int axis,
                                  const std::string& where) {
  ParameterShard s;
  s.whole = whole;
  if (grid.channel_parts() > 1 && axis >= 0) {
    const auto& d = grid.distribution();
    if (axis >= whole.rank() || whole[axis] % grid.channel_parts() != 0)
      throw ShapeError(where + ": " + std::to_string(axis < whole.rank() ? whole[axis] : 0) +
                       " channels do not split evenly over " + std::to_string(grid.channel_parts()) + " ranks (" +
                       (d.filter > 1 ? "filter " : "channel ") + std::to_string(grid.channel_parts()) +
                       ", distribution " + d.str() + "; its weights " + whole.str() + ")");
    s.axis = axis;
    s.parts = grid.channel_parts();
    s.index = grid.channel_index();
    s.group = grid.channels();
    s.replicas = grid.replicas();
  }
  return s;
}

Shape ParameterShard::local_shape(const std::string& where) const {
  if (!split()) return whole;
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> dims = whole.dims();
  if (a >= dims.size() || dims[a] % parts != 0)
    throw ShapeError(where + ": a parameter " + whole.str() + " does not split evenly into " + std::to_string(parts) +
                     " parts along dimension " + std::to_string(axis));
  dims[a] /= parts;
  return Shape(dims);
}

int64_t ParameterShard::whole_index(int64_t i) const { return ShardIndex(*this)(i); }

std::vector<float> ParameterShard::gather_whole(const std::vector<float>& slice) const {
  if (!split()) return slice;
  const auto count = static_cast<int>(slice.size());
  std::vector<float> all(slice.size() * static_cast<size_t>(parts)), whole(all.size());
  parallel::check_mpi(MPI_Allgather(slice.data(), count, MPI_FLOAT, all.data(), count, MPI_FLOAT, group.handle()),
                      "MPI_Allgather (parameter shards)");
  ParameterShard other = *this;
  for (int q = 0; q < parts; ++q) {
    other.index = q;
    const ShardIndex at(other);
    for (int64_t i = 0; i < count; ++i) whole[static_cast<size_t>(at(i))] = all[static_cast<size_t>(q * count + i)];
  }
  return whole;
}

std::vector<float> ParameterShard::slice_of(const std::vector<float>& whole) const {
  if (!split()) return whole;
  std::vector<float> slice(whole.size() / static_cast<size_t>(parts));
  const ShardIndex at(*this);
  for (size_t i = 0; i < slice.size(); ++i) slice[i] = whole[static_cast<size_t>(at(static_cast<int64_t>(i)))];
  return slice;
}

}  // namespace tessera::layers
