#pragma once
// Inference of a flood-filling network: a whole volume segmented object by object, each object
// grown from a seed by the network following its own prediction (Januszewski et al. 2018).
#include <cstdint>
#include <string>

#include "tessera/eval/segmentation_scores.hpp"
#include "tessera/ffn/ffn_options.hpp"
#include "tessera/ffn/labeled_volume.hpp"
#include "tessera/model/model.hpp"

namespace tessera::ffn {

/// What segment() does besides the thresholds of FfnOptions.
struct FloodFillOptions {
  /// Seeds are tried on a grid of this spacing (voxels), skipping voxels an earlier object
  /// holds: in raster order (`"grid"`, the reference's grid policy) or from the deepest inside
  /// a cell (`"interior"`, interior_seeds() with `dark`), the default.
  int64_t seed_spacing = 4;
  std::string seed_order = "interior";
  float dark = -1.0f;  // in normalised image units
  /// An object with fewer voxels than this is dropped and its voxels stay free.
  int64_t min_voxels = 50;
  /// FOVs one object may take at most (a guard against an object that floods everything).
  int64_t max_fovs = 2000;
};

/// How a segmentation went.
struct FloodFillResult {
  eval::Labels ids;          // 0: no object
  int64_t objects = 0;       // objects kept
  int64_t seeds_tried = 0;   // seeds the network was run from
  int64_t seeds_failed = 0;  // ... whose own voxel ended below the segment threshold
  int64_t too_small = 0;     // ... whose object was smaller than min_voxels
  int64_t fovs = 0;          // forward passes
  double seconds = 0;
};

/// Segments volumes with a trained FFN whose input is [F_D, F_H, F_W, 2] and output one logit
/// per FOV voxel. For each seed: an object map over the whole volume holding only the seed, the
/// FOV centred on the seed (moved inward where it would leave the volume), then FOVs in the
/// order face_max_moves queues them (at the move threshold, centres inside the volume, each
/// visited once), each prediction written over the map, until none is left or the seed voxel
/// falls below the move threshold (the reference's early end). The object then claims the voxels the
/// map puts at or above the segment threshold that no earlier object holds (the reference's
/// consolidation), when its seed voxel is among them and there are at least min_voxels.
class FloodFiller {
 public:
  FloodFiller(model::Model& model, const FfnOptions& options, const FloodFillOptions& fill);
  /// The volume's image is all it reads (its ids may be empty).
  FloodFillResult segment(const LabeledVolume& volume);

 private:
  model::Model& model_;
  FfnOptions options_;
  FloodFillOptions fill_;
};

}  // namespace tessera::ffn
