#include "tessera/layers/parameter_shard.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/even_split.hpp"
#include "tessera/layers/shard_index.hpp"

namespace tessera::layers {

ParameterShard ParameterShard::of(const parallel::ProcessGrid& grid, const Shape& whole, int axis,
                                  const std::string& where) {
  ParameterShard s;
  s.whole = whole;
  if (grid.channel_parts() > 1 && axis >= 0) {
    const auto& d = grid.distribution();
    if (axis >= whole.rank() || whole[axis] < grid.channel_parts())
      throw ShapeError(where + ": " + std::to_string(axis < whole.rank() ? whole[axis] : 0) +
                       " channels cannot split over " + std::to_string(grid.channel_parts()) +
                       " ranks, each needs at least one (" + (d.filter > 1 ? "filter " : "channel ") +
                       std::to_string(grid.channel_parts()) + ", distribution " + d.str() + "; its weights " +
                       whole.str() + ")");
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
  if (a >= dims.size() || dims[a] < parts)
    throw ShapeError(where + ": a parameter " + whole.str() + " cannot split into " + std::to_string(parts) +
                     " parts along dimension " + std::to_string(axis));
  dims[a] = even_part(dims[a], parts, index);
  return Shape(dims);
}

int64_t ParameterShard::whole_index(int64_t i) const { return ShardIndex(*this)(i); }

std::vector<float> ParameterShard::gather_whole(const std::vector<float>& slice) const {
  if (!split()) return slice;
  // The slices differ in size where the parts do not divide the axis.
  std::vector<int> counts(static_cast<size_t>(parts)), offsets(static_cast<size_t>(parts), 0);
  const int64_t per_row = whole.numel() / whole[axis];
  for (int q = 0; q < parts; ++q) {
    counts[static_cast<size_t>(q)] = static_cast<int>(even_part(whole[axis], parts, q) * per_row);
    if (q > 0)
      offsets[static_cast<size_t>(q)] = offsets[static_cast<size_t>(q) - 1] + counts[static_cast<size_t>(q) - 1];
  }
  std::vector<float> all(static_cast<size_t>(whole.numel())), result(all.size());
  parallel::check_mpi(MPI_Allgatherv(slice.data(), static_cast<int>(slice.size()), MPI_FLOAT, all.data(), counts.data(),
                                     offsets.data(), MPI_FLOAT, group.handle()),
                      "MPI_Allgatherv (parameter shards)");
  ParameterShard other = *this;
  for (int q = 0; q < parts; ++q) {
    other.index = q;
    const ShardIndex at(other);
    const auto first = static_cast<size_t>(offsets[static_cast<size_t>(q)]);
    for (int64_t i = 0; i < counts[static_cast<size_t>(q)]; ++i)
      result[static_cast<size_t>(at(i))] = all[first + static_cast<size_t>(i)];
  }
  return result;
}

std::vector<float> ParameterShard::slice_of(const std::vector<float>& whole_values) const {
  if (!split()) return whole_values;
  std::vector<float> slice(static_cast<size_t>(local_shape("parameter shard").numel()));
  const ShardIndex at(*this);
  for (size_t i = 0; i < slice.size(); ++i) slice[i] = whole_values[static_cast<size_t>(at(static_cast<int64_t>(i)))];
  return slice;
}

}  // namespace tessera::layers
