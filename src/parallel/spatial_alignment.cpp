#include "tessera/parallel/spatial_alignment.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/even_split.hpp"

namespace tessera::parallel {
namespace {
const char* const axis_names[3] = {"depth", "height", "width"};
}

int64_t SpatialAlignment::of(size_t axis, int64_t extent) const {
  const auto& m = alignments_.at(axis);
  const auto it = m.find(extent);
  return it == m.end() ? 1 : it->second;
}

void SpatialAlignment::set(size_t axis, int64_t extent, int64_t alignment) {
  if (alignment < 1 || extent < 1)
    throw Error(std::string("alignment ") + std::to_string(alignment) + " for " + axis_names[axis] + " " +
                std::to_string(extent) + ": both must be at least 1");
  if (alignment == 1)
    alignments_.at(axis).erase(extent);
  else
    alignments_.at(axis)[extent] = alignment;
}

int64_t SpatialAlignment::boundary(size_t axis, int64_t extent, int parts, int index) const {
  if (index >= parts) return extent;
  const int64_t a = of(axis, extent);
  return a * even_boundary(extent / a, parts, index);
}

bool SpatialAlignment::fits(size_t axis, int64_t extent, int parts) const { return extent / of(axis, extent) >= parts; }

std::string SpatialAlignment::explain(size_t axis, int64_t extent, int parts) const {
  const int64_t a = of(axis, extent);
  std::string s = std::string(axis_names[axis]) + " " + std::to_string(extent) + " cannot split over " +
                  std::to_string(parts) + " ranks";
  if (a == 1) return s + ", each needs at least one plane";
  return s + " in blocks aligned to " + std::to_string(a) + " planes (" + std::to_string(extent / a) +
         " blocks; the alignment lets the strided layers that follow cut their smaller outputs at the same places)";
}

}  // namespace tessera::parallel
