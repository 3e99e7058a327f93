#pragma once
// The volumes a flood-filling network learns from and segments: an image and the true object
// of every voxel, whole in memory (an FOV may go anywhere in them).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/eval/segmentation_scores.hpp"
#include "tessera/io/normalization.hpp"

namespace tessera::ffn {

using Voxel = std::array<int64_t, 3>;  // (D, H, W) position in a volume

/// One volume: its image, normalised as training reads it (io::Normalization), and its
/// object ids (0: no object, e.g. membrane), both row-major [D, H, W].
struct LabeledVolume {
  std::array<int64_t, 3> size{0, 0, 0};
  std::vector<float> image;
  eval::Labels ids;

  int64_t voxels() const { return size[0] * size[1] * size[2]; }
  int64_t index(const Voxel& v) const { return (v[0] * size[1] + v[1]) * size[2] + v[2]; }
};

/// Sample `sample` of the data file `path`: the one-channel image of "inputs" and, unless
/// `instances` is empty, the ids of that dataset. IoError naming the file and the dataset when
/// one is missing or the shapes disagree; ConfigError at `where` when the build has no HDF5.
LabeledVolume read_labeled_volume(const std::string& path, int64_t sample, const std::string& instances,
                                  const io::Normalization& normalization, const std::string& where);

/// Every sample of the data files named in `sample_list` (one path per line, as `tessera
/// datagen cells` writes it): the one-channel image of "inputs" and the ids of `instances`.
/// Throws IoError naming the file and the dataset when one is missing or the shapes disagree;
/// ConfigError at `where` when the build has no HDF5.
std::vector<LabeledVolume> read_labeled_volumes(const std::string& sample_list, const std::string& instances,
                                                const io::Normalization& normalization, const std::string& where);

}  // namespace tessera::ffn
