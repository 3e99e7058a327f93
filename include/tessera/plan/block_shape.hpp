#pragma once
#include <optional>
#include <vector>

#include "tessera/core/shape.hpp"
#include "tessera/parallel/distribution.hpp"

namespace tessera::plan {

/// The largest rank's block of a whole channels-last activation under `d`, by the rules
/// ProcessGrid::local_shape applies (samples, channels and planes in shares that differ by at
/// most one, the largest taken; features [N, F] split over samples and channels only, copied
/// across a spatial group), but without ranks, so that layouts for any rank count can be
/// weighed in one process. Planes are cut one by one, as a model cuts them where no strided
/// layer split over the same axis follows; where one does, the model cuts in units of the
/// strides, blocks a little more uneven than priced here. Empty when the
/// activation does not split (fewer samples than sample groups, channels than channel ranks
/// or planes than ranks along an axis, or a 2D activation split over depth).
std::optional<Shape> block_shape(const Shape& global, const parallel::Distribution& d);

/// Every distribution of exactly `ranks` ranks over samples, the first `spatial_axes` of
/// (height, width) for 2 or (depth, height, width) for 3, and, when `channels`, a channel or
/// a filter group or a 2-D grid of both: the candidates a layer is weighed under. In a fixed
/// order.
std::vector<parallel::Distribution> distributions_of(int ranks, int spatial_axes, bool channels);

}  // namespace tessera::plan
