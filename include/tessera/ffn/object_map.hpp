#pragma once
// A flood-filling network's object map: its belief, as logits, that each voxel of a box of a
// volume belongs to the object being traced. The network reads it as its second input channel
// and overwrites it with its prediction for the FOV it just saw.
#include <array>
#include <cstdint>
#include <vector>

#include "tessera/ffn/labeled_volume.hpp"

namespace tessera::ffn {

/// The logits over the box [origin, origin + size) of a volume, row-major; voxels of a volume
/// are addressed in the volume's coordinates. A fresh map holds the logit of
/// FfnOptions::pad_probability everywhere.
class ObjectMap {
 public:
  ObjectMap(const Voxel& origin, const std::array<int64_t, 3>& size);

  /// Every voxel back at the pad logit.
  void reset();
  /// The seed voxel at the logit of FfnOptions::seed_probability.
  void set_seed(const Voxel& voxel);
  /// Whether the FOV of `fov` voxels centred at `centre` lies inside the box.
  bool holds_fov(const Voxel& centre, const std::array<int64_t, 3>& fov) const;
  /// Copies that FOV's logits to out[i · stride] for its voxels i in row-major order (stride 2
  /// writes one channel of an interleaved two-channel input).
  void crop(const Voxel& centre, const std::array<int64_t, 3>& fov, float* out, int64_t stride) const;
  /// Overwrites that FOV's logits with logits[i] (the network's prediction).
  void paste(const Voxel& centre, const std::array<int64_t, 3>& fov, const float* logits);
  float at(const Voxel& voxel) const { return logits_[static_cast<size_t>(offset(voxel))]; }
  const std::vector<float>& logits() const { return logits_; }

 private:
  int64_t offset(const Voxel& voxel) const;
  Voxel origin_;
  std::array<int64_t, 3> size_;
  std::vector<float> logits_;
};

/// Copies the FOV of `fov` voxels centred at `centre` of the volume's image to out[i · stride];
/// the FOV must lie inside the volume.
void crop_image(const LabeledVolume& volume, const Voxel& centre, const std::array<int64_t, 3>& fov, float* out,
                int64_t stride);

}  // namespace tessera::ffn
