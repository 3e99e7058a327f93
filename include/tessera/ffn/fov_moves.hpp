#pragma once
// Where a flood-filling network's field of view (FOV) goes next: the face-maximum movement rule
// of the reference implementation (Januszewski et al., "High-precision automated
// reconstruction of neurons with flood-filling networks", Nature Methods 2018), used both in
// training (the FOV follows the object it is predicting) and in inference (flood filling).
#include <array>
#include <cstdint>
#include <vector>

namespace tessera::ffn {

/// One move of the FOV: the offset (D, H, W) in voxels from its current centre, and its score,
/// the object probability that triggered it.
struct FovMove {
  std::array<int64_t, 3> offset{0, 0, 0};
  float score = 0;
};

/// The moves the network's object probability over the current FOV asks for. `probability` is
/// the FOV's map, `fov` = (D, H, W) voxels, row-major, its centre at fov / 2 on each axis. For
/// each axis with `delta` δ > 0 and each direction ±, the face is the plane δ voxels from the
/// centre along that axis, within ±δ of the centre along the other two (the part of the FOV
/// the next FOV, centred there, keeps in its own centre region). When the face's highest
/// probability reaches `threshold`, the FOV moves there: ±δ along the axis, and on the other
/// axes to that voxel's position relative to the face's centre. Of equal highest voxels the one
/// nearest the face's centre wins (then the first in row-major order). The reference takes the
/// first in row-major order; on a saturated face (probability 1 in float, which a confident
/// network reaches) that always shifts the FOV towards lower indices, and on a uniform object
/// no sequence of moves then climbs on all three axes at once, leaving its far corner unvisited.
/// At most 6 moves, by decreasing score (equal scores in axis order
/// D, H, W, minus before plus). Throws Error when the map does not hold fov voxels, or a face
/// lies outside the FOV (δ > (F − 1)/2 on an axis).
std::vector<FovMove> face_max_moves(const std::vector<float>& probability, const std::array<int64_t, 3>& fov,
                                    const std::array<int64_t, 3>& delta, float threshold);

/// face_max_moves of the probability that the network's `logits` (fov voxels) give: what
/// training and inference both ask after each prediction.
std::vector<FovMove> face_max_moves_of_logits(const float* logits, const std::array<int64_t, 3>& fov,
                                              const std::array<int64_t, 3>& delta, float threshold);

}  // namespace tessera::ffn
