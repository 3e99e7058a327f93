#include "tessera/layers/parameter_shard.hpp"

#include <algorithm>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/core/even_split.hpp"

namespace tessera::layers {

std::vector<int64_t> ParameterShard::range(int64_t first, int64_t count) {
  std::vector<int64_t> r(static_cast<size_t>(std::max<int64_t>(count, 0)));
  std::iota(r.begin(), r.end(), first);
  return r;
}

ParameterShard ParameterShard::slices(const Shape& whole, int axis, int parts, int index) {
  ParameterShard s;
  s.whole = whole;
  if (axis < 0 || parts <= 1) return s;
  s.axes = {axis};
  s.index = index;
  const int64_t extent = axis < whole.rank() ? whole[axis] : 0;
  for (int q = 0; q < parts; ++q)
    s.held.push_back({range(even_boundary(extent, parts, q), even_part(extent, parts, q))});
  return s;
}

ParameterShard ParameterShard::of(const parallel::ProcessGrid& grid, const Shape& whole, int axis,
                                  const std::string& where) {
  if (grid.channel_parts() <= 1 || axis < 0) return slices(whole, -1, 1, 0);
  const auto& d = grid.distribution();
  if (axis >= whole.rank() || whole[axis] < grid.channel_parts())
    throw ShapeError(where + ": " + std::to_string(axis < whole.rank() ? whole[axis] : 0) +
                     " channels cannot split over " + std::to_string(grid.channel_parts()) +
                     " ranks, each needs at least one (" + d.channel_split_str() + ", distribution " + d.str() +
                     "; its weights " + whole.str() + ")");
  ParameterShard s = slices(whole, axis, grid.channel_parts(), grid.channel_index());
  s.group = grid.channels();
  s.replicas = grid.replicas();
  return s;
}

Shape ParameterShard::member_shape(int q, const std::string& where) const {
  if (!run_count.empty()) {
    member_block_shape(q, where);  // throws for the blocks as it would without runs
    return Shape{run_count.at(static_cast<size_t>(q))};
  }
  return member_block_shape(q, where);
}

Shape ParameterShard::member_block_shape(int q, const std::string& where) const {
  if (axes.empty()) return whole;
  std::vector<int64_t> dims = whole.dims();
  for (size_t a = 0; a < axes.size(); ++a) {
    const auto axis = static_cast<size_t>(axes[a]);
    const size_t count = held.at(static_cast<size_t>(q)).at(a).size();
    // Any member without elements, not only this one: every rank throws alike.
    const bool empty = std::any_of(held.begin(), held.end(), [&](const auto& m) { return m.at(a).empty(); });
    if (axis >= dims.size() || empty)
      throw ShapeError(where + ": a parameter " + whole.str() + " cannot split into " + std::to_string(parts()) +
                       " parts along dimension " + std::to_string(axes[a]));
    dims[axis] = static_cast<int64_t>(count);
  }
  return Shape(dims);
}

int64_t ParameterShard::member_whole_index(int q, int64_t i) const {
  if (!run_first.empty()) i += run_first[static_cast<size_t>(q)];
  if (axes.empty()) return i;
  const auto& mine = held[static_cast<size_t>(q)];
  // Row-major: peel the part's coordinates from the last dimension, map the split ones.
  int64_t rest = i, at = 0, stride = 1;
  for (int d = whole.rank() - 1; d >= 0; --d) {
    const auto a = std::find(axes.begin(), axes.end(), d);
    const std::vector<int64_t>* along = a == axes.end() ? nullptr : &mine[static_cast<size_t>(a - axes.begin())];
    const int64_t extent = along ? static_cast<int64_t>(along->size()) : whole[d];
    const int64_t c = rest % extent;
    rest /= extent;
    at += (along ? (*along)[static_cast<size_t>(c)] : c) * stride;
    stride *= whole[d];
  }
  return at;
}

std::vector<float> ParameterShard::gather_whole(const std::vector<float>& part) const {
  if (!split()) return part;
  // The parts differ in size where the channels do not divide.
  const auto members = static_cast<size_t>(parts());
  std::vector<int> counts(members), offsets(members, 0);
  for (size_t q = 0; q < members; ++q) {
    counts[q] = static_cast<int>(member_shape(static_cast<int>(q), "parameter shard").numel());
    if (q > 0) offsets[q] = offsets[q - 1] + counts[q - 1];
  }
  std::vector<float> all(static_cast<size_t>(offsets.back() + counts.back())),
      result(static_cast<size_t>(whole.numel()));
  parallel::check_mpi(MPI_Allgatherv(part.data(), static_cast<int>(part.size()), MPI_FLOAT, all.data(), counts.data(),
                                     offsets.data(), MPI_FLOAT, group.handle()),
                      "MPI_Allgatherv (parameter shards)");
  for (size_t q = 0; q < members; ++q)
    for (int64_t i = 0; i < counts[q]; ++i)
      result[static_cast<size_t>(member_whole_index(static_cast<int>(q), i))] =
          all[static_cast<size_t>(offsets[q] + i)];
  return result;
}

std::vector<float> ParameterShard::slice_of(const std::vector<float>& whole_values) const {
  if (!split()) return whole_values;
  std::vector<float> slice(static_cast<size_t>(local_shape("parameter shard").numel()));
  for (size_t i = 0; i < slice.size(); ++i)
    slice[i] = whole_values[static_cast<size_t>(whole_index(static_cast<int64_t>(i)))];
  return slice;
}

}  // namespace tessera::layers
