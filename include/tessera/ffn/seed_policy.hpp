#pragma once
// Where flood-fill inference tries to start objects, and in which order.
#include <string>
#include <vector>

#include "tessera/ffn/labeled_volume.hpp"

namespace tessera::ffn {

/// Squared Euclidean distance, in voxels², from each voxel of a [D, H, W] volume to the nearest
/// voxel where `boundary` is non-zero (exact: Felzenszwalb and Huttenlocher's lower envelopes,
/// one axis after another); a volume with no boundary voxel gets a value larger than any
/// distance in it.
std::vector<float> squared_distance_to(const std::vector<uint8_t>& boundary, const std::array<int64_t, 3>& size);

/// Seeds every `spacing` voxels along each axis (from spacing / 2), in raster order: the
/// reference's grid policy.
std::vector<Voxel> grid_seeds(const std::array<int64_t, 3>& size, int64_t spacing);

/// The grid's seeds ordered from the deepest inside a cell to the shallowest, by the distance
/// from voxels darker than `dark` (the normalised image; membranes are dark in EM), those dark
/// voxels themselves left out: objects start where the network is surest, so that a cell is
/// grown whole from its middle before a seed near its edge could start a fragment of it. The
/// reference's peaks policy (seeds far from image edges) in this form; equal depths keep the
/// raster order.
std::vector<Voxel> interior_seeds(const LabeledVolume& volume, int64_t spacing, float dark);

}  // namespace tessera::ffn
