#pragma once
// Helpers shared by the conv and pool geometries: a 2D geometry is stored as 3D with depth 1,
// and these put the depth back out of shapes and descriptions.
#include <array>
#include <cstdint>
#include <string>

#include "tessera/core/shape.hpp"

namespace tessera::ops::detail {

/// [outer, (D,) H, W, inner]: an activation or a weight shape in channels-last order.
inline Shape channels_last(int spatial_rank, int64_t outer, const std::array<int64_t, 3>& size, int64_t inner) {
  if (spatial_rank == 2) return Shape{outer, size[1], size[2], inner};
  return Shape{outer, size[0], size[1], size[2], inner};
}

/// "3", or "3x1x2" when the extents differ (2D shows H and W only).
inline std::string extents(const std::array<int64_t, 3>& v, int spatial_rank) {
  const size_t first = spatial_rank == 2 ? 1 : 0;
  bool same = true;
  for (size_t i = first; i < 3; ++i) same = same && v[i] == v[first];
  if (same) return std::to_string(v[first]);
  std::string s;
  for (size_t i = first; i < 3; ++i) s += (i == first ? "" : "x") + std::to_string(v[i]);
  return s;
}

/// "x5x7x6": every extent, each preceded by "x" (2D shows H and W only).
inline std::string all_extents(const std::array<int64_t, 3>& v, int spatial_rank) {
  std::string s;
  for (size_t i = spatial_rank == 2 ? 1 : 0; i < 3; ++i) s += "x" + std::to_string(v[i]);
  return s;
}

}  // namespace tessera::ops::detail
