#pragma once
// One training example of a flood-filling network: a seed inside an object, and the sequence
// of FOVs the network's own predictions move it through (the reference's max_pred_offsets).
#include <deque>
#include <set>

#include "tessera/ffn/ffn_options.hpp"
#include "tessera/ffn/labeled_volume.hpp"
#include "tessera/ffn/object_map.hpp"

namespace tessera::ffn {

/// The FOV starts centred on the seed, over an object map that holds only the seed. After each
/// prediction (advance()) the map takes the predicted logits, and every face move the
/// prediction asks for (face_max_moves at the move threshold) is queued, by decreasing score,
/// unless its centre was visited or lies further than fov_moves·δ from the seed on an axis.
/// The next FOV is the queue's first; the example ends when the queue is empty. Inputs are the
/// image and the map, targets the seed's object with the reference's soft labels.
class FovExample {
 public:
  /// The seed must lie inside an object (id not 0) at least training_reach() from every face
  /// of the volume.
  FovExample(const LabeledVolume& volume, const Voxel& seed, const FfnOptions& options);

  const Voxel& centre() const { return centre_; }
  /// The FOV's inputs, [F_D, F_H, F_W, 2] channels-last: the image, then the map's logits.
  void write_inputs(float* row) const;
  /// Its targets, [F_D, F_H, F_W]: seed_probability in the seed's object, pad_probability
  /// elsewhere.
  void write_targets(float* row) const;
  /// Takes the network's logits for the current FOV; false when no FOV is left.
  bool advance(const float* logits);
  /// FOVs seen so far (the current one included).
  int64_t positions() const { return positions_; }

 private:
  const LabeledVolume* volume_;
  FfnOptions options_;
  Voxel seed_, centre_;
  uint32_t object_;
  ObjectMap map_;
  std::deque<Voxel> queue_;
  std::set<Voxel> visited_;
  int64_t positions_ = 1;
};

/// Picks training seeds: voxels inside objects whose training reach lies inside the volume,
/// uniformly over all such voxels of all volumes (larger objects are seeded more often).
class SeedSampler {
 public:
  /// Throws ConfigError at `where` when no voxel of any volume qualifies (volumes smaller than
  /// 2·training_reach + 1, or no object).
  SeedSampler(const std::vector<LabeledVolume>& volumes, const FfnOptions& options, const std::string& where);
  struct Seed {
    size_t volume = 0;
    Voxel voxel{0, 0, 0};
  };
  /// The seed chosen by 64 random bits.
  Seed pick(uint64_t random_bits) const;
  int64_t candidates() const { return static_cast<int64_t>(candidates_.size()); }

 private:
  std::vector<std::pair<uint32_t, int64_t>> candidates_;  // (volume, voxel index)
  const std::vector<LabeledVolume>* volumes_;
};

}  // namespace tessera::ffn
