#pragma once
// The "ffn" section of a flood-filling network's run config: the field of view, its movement
// and the thresholds of training and inference (docs/config.md, examples/ffn/README.md).
#include <array>
#include <cstdint>

#include "tessera/core/config.hpp"

namespace tessera::model {
class Model;
}

namespace tessera::ffn {

/// How a flood-filling network moves over a volume. Defaults follow the reference
/// implementation (Januszewski et al. 2018): moves of 8 voxels for a 33³ FOV, a move where the
/// object reaches probability 0.9 on a face, voxels at 0.6 or more belong to the object.
struct FfnOptions {
  std::array<int64_t, 3> fov{33, 33, 33};  // voxels (D, H, W), each odd: the centre is a voxel
  std::array<int64_t, 3> delta{8, 8, 8};   // voxels the FOV moves along an axis
  /// In training, how far the FOV may wander from the seed, in moves along each axis (the
  /// reference's fov_moves): the FOV's centre stays within fov_moves·δ of the seed, and an
  /// example ends when no move inside that box is left.
  int64_t fov_moves = 1;
  float move_threshold = 0.9f;     // object probability on a face that moves the FOV there
  float segment_threshold = 0.6f;  // object probability at which a voxel belongs to the object

  /// The object map's values before any prediction: the seed voxel at 0.95, every other voxel
  /// at 0.05 (as logits in the map), and the soft training labels (0.95 in the object, 0.05
  /// outside), as in the reference.
  static constexpr float seed_probability = 0.95f, pad_probability = 0.05f;

  /// Half the FOV on each axis (voxels from its centre to its edge).
  std::array<int64_t, 3> radius() const { return {fov[0] / 2, fov[1] / 2, fov[2] / 2}; }
  /// Voxels around a training seed an example may cover: radius + fov_moves·δ per axis.
  std::array<int64_t, 3> training_reach() const;
  int64_t fov_voxels() const { return fov[0] * fov[1] * fov[2]; }

  /// Reads {"fov", "delta", "fov_moves", "move_threshold", "segment_threshold"}; "fov" and
  /// "delta" take one integer for all axes or [D, H, W].
  static FfnOptions from_json(ConfigObject& cfg);
};

/// Throws ConfigError naming $.model.input unless `model` reads FOVs of `options` with two
/// channels (the image and the object map), and $.model.layers unless it gives one logit per
/// FOV voxel: what training (FfnRun) and inference (FloodFiller) both need.
void check_ffn_model(const model::Model& model, const FfnOptions& options);

/// log(p / (1 − p)): what the object map and the network's output hold.
float logit(float probability);

}  // namespace tessera::ffn
