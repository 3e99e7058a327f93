#pragma once
// Connected components of a binary volume: the simplest instance segmentation, and the
// baselines a flood-filling network is compared with (components of a U-Net's thresholded
// interior map, or of the true membranes).
#include <array>
#include <cstdint>
#include <vector>

#include "tessera/eval/segmentation_scores.hpp"

namespace tessera::eval {

/// The 6-connected components (voxels sharing a face) of the voxels where `mask` is non-zero,
/// in a volume of `size` = (D, H, W) voxels stored row-major [D, H, W]: ids 1, 2, … in the
/// order of each component's first voxel, 0 where the mask is 0. Components smaller than
/// `min_voxels` are left at 0 (specks a segmentation would not call objects). Throws Error
/// when the mask's size is not D·H·W.
Labels connected_components(const std::vector<uint8_t>& mask, const std::array<int64_t, 3>& size,
                            int64_t min_voxels = 1);

/// The number of distinct non-zero ids in `labels`.
int64_t count_objects(const Labels& labels);

}  // namespace tessera::eval
