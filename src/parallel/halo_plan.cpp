#include "tessera/parallel/halo_plan.hpp"

#include "tessera/core/error.hpp"

namespace tessera::parallel {
namespace {

const char* const dimension_names[3] = {"depth", "height", "width"};

/// The directions from a block to its 26 neighbours, each component in {-1, 0, 1}, numbered
/// 0..26 (13, the block itself, is never used); the number is the message tag.
int direction_number(const std::array<int, 3>& d) { return (d[0] + 1) * 9 + (d[1] + 1) * 3 + (d[2] + 1); }

int64_t volume_of(const Index5& e) { return e[0] * e[1] * e[2] * e[3] * e[4]; }

std::array<int, 3> parts_of(const Distribution& d) { return {d.depth, d.height, d.width}; }

}  // namespace

bool HaloWidths::any() const {
  for (size_t k = 0; k < 3; ++k)
    if (before[k] != 0 || after[k] != 0) return true;
  return false;
}

std::string HaloWidths::str() const {
  std::string s;
  for (size_t k = 0; k < 3; ++k)
    s += std::string(k ? ", " : "") + dimension_names[k] + " " + std::to_string(before[k]) + "+" +
         std::to_string(after[k]);
  return s;
}

HaloPlan::HaloPlan(const Distribution& distribution, const std::array<int, 3>& spatial_index, const Shape& local,
                   const HaloWidths& halo, const std::string& where)
    : local_(local), padded_(local), halo_(halo) {
  validate(distribution, where);
  for (size_t k = 0; k < 3; ++k)
    if (local.rank() == 5 || k > 0) padded_[static_cast<int>(k) + local.rank() - 4] += halo.before[k] + halo.after[k];
  // Depth slowest: the order every rank shares (the class's contract).
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (dz != 0 || dy != 0 || dx != 0) add_direction(distribution, spatial_index, {dz, dy, dx});
}

void HaloPlan::validate(const Distribution& distribution, const std::string& where) const {
  require_shape(local_.rank() == 4 || local_.rank() == 5,
                where + ": halo exchange needs a block [N, H, W, C] or [N, D, H, W, C], not " + local_.str());
  const Index5 block = extents5_of(local_);
  const auto parts = parts_of(distribution);
  if (local_.rank() == 4)
    require_shape(halo_.before[0] == 0 && halo_.after[0] == 0 && parts[0] == 1,
                  where + ": a 2D block " + local_.str() + " has no depth to split or pad (halo " + halo_.str() +
                      ", distribution " + distribution.str() + ")");
  for (size_t k = 0; k < 3; ++k) {
    const int64_t extent = block[k + 1];
    require_shape(halo_.before[k] >= 0 && halo_.after[k] >= 0,
                  where + ": negative " + dimension_names[k] + " halo (" + halo_.str() + ")");
    // A halo takes data from the next block only; wider ones would need the block after it.
    // Without a neighbour (one part) the whole halo is boundary, of any width.
    for (const int64_t width : {halo_.before[k], halo_.after[k]})
      require_shape(parts[k] == 1 || width <= extent,
                    where + ": a " + dimension_names[k] + " halo of " + std::to_string(width) +
                        " is wider than the neighbouring block's " + dimension_names[k] + " of " +
                        std::to_string(extent) + " (block " + local_.str() + ", distribution " + distribution.str() +
                        ")");
  }
}

void HaloPlan::add_direction(const Distribution& distribution, const std::array<int, 3>& spatial_index,
                             const std::array<int, 3>& dir) {
  const Index5 block = extents5_of(local_);
  const auto parts = parts_of(distribution);
  // Along each axis: the halo region in the padded block in this direction, and the part of
  // this block the neighbour in this direction needs for its halo facing us.
  Index5 region_offset{0, 0, 0, 0, 0}, region_extent = block, part_offset{0, 0, 0, 0, 0}, part_extent = block;
  std::array<int, 3> neighbour{};
  bool exists = true;
  for (size_t k = 0; k < 3; ++k) {
    const int64_t extent = block[k + 1], b = halo_.before[k], a = halo_.after[k];
    const size_t i = k + 1;
    if (dir[k] < 0) {
      region_offset[i] = 0, region_extent[i] = b;
      part_offset[i] = 0, part_extent[i] = a;
    } else if (dir[k] == 0) {
      region_offset[i] = b, region_extent[i] = extent;
    } else {
      region_offset[i] = b + extent, region_extent[i] = a;
      part_offset[i] = extent - b, part_extent[i] = b;
    }
    neighbour[k] = spatial_index[k] + dir[k];
    exists = exists && neighbour[k] >= 0 && neighbour[k] < parts[k];
  }
  if (!exists) {
    if (volume_of(region_extent) > 0) boundary_.push_back({region_offset, region_extent});
    return;
  }
  const int peer = distribution.spatial_rank(neighbour);
  HaloBox region{dir, neighbour, peer, direction_number(dir), region_offset, region_extent};
  if (region.count() > 0) {
    receives_.push_back(region);
    elements_received_ += region.count();
  }
  HaloBox part{dir, neighbour, peer, direction_number({-dir[0], -dir[1], -dir[2]}), part_offset, part_extent};
  if (part.count() > 0) {
    sends_.push_back(part);
    elements_sent_ += part.count();
  }
}

}  // namespace tessera::parallel
