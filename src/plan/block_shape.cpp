#include "tessera/plan/block_shape.hpp"

namespace tessera::plan {
namespace {

/// The largest of `parts` near-equal parts of `extent`.
int64_t largest_part(int64_t extent, int parts) { return (extent + parts - 1) / parts; }

/// The divisors of n, ascending.
std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int k = 1; k <= n; ++k)
    if (n % k == 0) out.push_back(k);
  return out;
}

}  // namespace

std::optional<Shape> block_shape(const Shape& global, const parallel::Distribution& d) {
  if (global.rank() < 2) return std::nullopt;
  Shape local = global;
  const size_t last = global.rank() - 1;
  if (global[0] < d.sample || global[last] < d.channel_parts()) return std::nullopt;
  // Samples, channels and planes split into shares that differ by at most one
  // (parallel::SampleShares, ProcessGrid::local_channels, SpatialAlignment): the largest is the
  // block that sets the pace.
  local[0] = largest_part(global[0], d.sample);
  local[last] = largest_part(global[last], d.channel_parts());
  if (global.rank() == 2) return local;
  if (global.rank() == 4) {
    if (d.depth != 1 || global[1] < d.height || global[2] < d.width) return std::nullopt;
    local[1] = largest_part(global[1], d.height);
    local[2] = largest_part(global[2], d.width);
    return local;
  }
  if (global.rank() != 5 || global[1] < d.depth || global[2] < d.height || global[3] < d.width) return std::nullopt;
  local[1] = largest_part(global[1], d.depth);
  local[2] = largest_part(global[2], d.height);
  local[3] = largest_part(global[3], d.width);
  return local;
}

std::vector<parallel::Distribution> distributions_of(int ranks, int spatial_axes, bool channels) {
  std::vector<parallel::Distribution> out;
  const std::vector<int> none{1};
  const std::vector<int> all = divisors(ranks);
  const std::vector<int>& depths = spatial_axes >= 3 ? all : none;
  const std::vector<int>& planes = spatial_axes >= 2 ? all : none;
  const std::vector<int>& groups = channels ? all : none;
  for (int c : groups)
    for (int dd : depths)
      for (int h : planes)
        for (int w : planes) {
          const int64_t used = int64_t{c} * dd * h * w;
          if (ranks % used != 0) continue;
          parallel::Distribution d;
          d.sample = static_cast<int>(ranks / used);
          d.depth = dd;
          d.height = h;
          d.width = w;
          if (c == 1) {
            out.push_back(d);
            continue;
          }
          d.filter = c;
          out.push_back(d);
          d.filter = 1;
          d.channel = c;
          out.push_back(d);
          // 2-D: channel a x filter c/a.
          for (int a = 2; a < c; ++a) {
            if (c % a != 0) continue;
            d.channel = a;
            d.filter = c / a;
            out.push_back(d);
          }
        }
  return out;
}

}  // namespace tessera::plan
