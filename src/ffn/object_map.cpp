#include "tessera/ffn/object_map.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/ffn/ffn_options.hpp"

namespace tessera::ffn {
namespace {

/// Calls visit(box offset, FOV index) for every voxel of the FOV, rows along W contiguous.
template <typename Visit>
void for_fov(const Voxel& start, const std::array<int64_t, 3>& box, const std::array<int64_t, 3>& fov, Visit visit) {
  int64_t i = 0;
  for (int64_t d = 0; d < fov[0]; ++d)
    for (int64_t h = 0; h < fov[1]; ++h) {
      const int64_t row = ((start[0] + d) * box[1] + start[1] + h) * box[2] + start[2];
      for (int64_t w = 0; w < fov[2]; ++w, ++i) visit(row + w, i);
    }
}

Voxel fov_start(const Voxel& centre, const std::array<int64_t, 3>& fov, const Voxel& origin) {
  return {centre[0] - fov[0] / 2 - origin[0], centre[1] - fov[1] / 2 - origin[1], centre[2] - fov[2] / 2 - origin[2]};
}

bool inside(const Voxel& start, const std::array<int64_t, 3>& fov, const std::array<int64_t, 3>& box) {
  for (size_t a = 0; a < 3; ++a)
    if (start[a] < 0 || start[a] + fov[a] > box[a]) return false;
  return true;
}

}  // namespace

ObjectMap::ObjectMap(const Voxel& origin, const std::array<int64_t, 3>& size)
    : origin_(origin), size_(size), logits_(static_cast<size_t>(size[0] * size[1] * size[2])) {
  reset();
}

void ObjectMap::reset() { std::fill(logits_.begin(), logits_.end(), logit(FfnOptions::pad_probability)); }

void ObjectMap::set_seed(const Voxel& voxel) {
  logits_[static_cast<size_t>(offset(voxel))] = logit(FfnOptions::seed_probability);
}

bool ObjectMap::holds_fov(const Voxel& centre, const std::array<int64_t, 3>& fov) const {
  return inside(fov_start(centre, fov, origin_), fov, size_);
}

void ObjectMap::crop(const Voxel& centre, const std::array<int64_t, 3>& fov, float* out, int64_t stride) const {
  if (!holds_fov(centre, fov)) throw Error("object map: the FOV lies outside the map");
  for_fov(fov_start(centre, fov, origin_), size_, fov,
          [&](int64_t at, int64_t i) { out[i * stride] = logits_[static_cast<size_t>(at)]; });
}

void ObjectMap::paste(const Voxel& centre, const std::array<int64_t, 3>& fov, const float* logits) {
  if (!holds_fov(centre, fov)) throw Error("object map: the FOV lies outside the map");
  for_fov(fov_start(centre, fov, origin_), size_, fov,
          [&](int64_t at, int64_t i) { logits_[static_cast<size_t>(at)] = logits[i]; });
}

int64_t ObjectMap::offset(const Voxel& v) const {
  const Voxel p{v[0] - origin_[0], v[1] - origin_[1], v[2] - origin_[2]};
  for (size_t a = 0; a < 3; ++a)
    if (p[a] < 0 || p[a] >= size_[a]) throw Error("object map: a voxel outside the map");
  return (p[0] * size_[1] + p[1]) * size_[2] + p[2];
}

void crop_image(const LabeledVolume& volume, const Voxel& centre, const std::array<int64_t, 3>& fov, float* out,
                int64_t stride) {
  const Voxel start = fov_start(centre, fov, {0, 0, 0});
  if (!inside(start, fov, volume.size)) throw Error("FFN: the FOV lies outside the volume");
  for_fov(start, volume.size, fov,
          [&](int64_t at, int64_t i) { out[i * stride] = volume.image[static_cast<size_t>(at)]; });
}

}  // namespace tessera::ffn
