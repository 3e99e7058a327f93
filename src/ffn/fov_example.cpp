#include "tessera/ffn/fov_example.hpp"

#include <cstdlib>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/ffn/fov_moves.hpp"

namespace tessera::ffn {
namespace {

Voxel box_origin(const Voxel& seed, const std::array<int64_t, 3>& reach) {
  return {seed[0] - reach[0], seed[1] - reach[1], seed[2] - reach[2]};
}
std::array<int64_t, 3> box_size(const std::array<int64_t, 3>& reach) {
  return {2 * reach[0] + 1, 2 * reach[1] + 1, 2 * reach[2] + 1};
}

}  // namespace

FovExample::FovExample(const LabeledVolume& volume, const Voxel& seed, const FfnOptions& options)
    : volume_(&volume),
      options_(options),
      seed_(seed),
      centre_(seed),
      object_(volume.ids[static_cast<size_t>(volume.index(seed))]),
      map_(box_origin(seed, options.training_reach()), box_size(options.training_reach())) {
  const auto reach = options.training_reach();
  for (size_t a = 0; a < 3; ++a)
    if (seed[a] < reach[a] || seed[a] + reach[a] >= volume.size[a])
      throw Error("FFN example: the seed lies closer to the volume's face than the FOV may move");
  if (object_ == 0) throw Error("FFN example: the seed lies outside every object");
  map_.set_seed(seed);
  visited_.insert(seed);
}

void FovExample::write_inputs(float* row) const {
  crop_image(*volume_, centre_, options_.fov, row, 2);
  map_.crop(centre_, options_.fov, row + 1, 2);
}

void FovExample::write_targets(float* row) const {
  const auto& fov = options_.fov;
  const auto r = options_.radius();
  int64_t i = 0;
  for (int64_t d = 0; d < fov[0]; ++d)
    for (int64_t h = 0; h < fov[1]; ++h)
      for (int64_t w = 0; w < fov[2]; ++w, ++i) {
        const Voxel v{centre_[0] - r[0] + d, centre_[1] - r[1] + h, centre_[2] - r[2] + w};
        const bool in = volume_->ids[static_cast<size_t>(volume_->index(v))] == object_;
        row[i] = in ? FfnOptions::seed_probability : FfnOptions::pad_probability;
      }
}

bool FovExample::advance(const float* logits) {
  map_.paste(centre_, options_.fov, logits);
  for (const FovMove& m : face_max_moves_of_logits(logits, options_.fov, options_.delta, options_.move_threshold)) {
    const Voxel next{centre_[0] + m.offset[0], centre_[1] + m.offset[1], centre_[2] + m.offset[2]};
    bool near = true;
    for (size_t a = 0; a < 3; ++a)
      near = near && std::abs(next[a] - seed_[a]) <= options_.fov_moves * options_.delta[a];
    if (near && visited_.insert(next).second) queue_.push_back(next);
  }
  if (queue_.empty()) return false;
  centre_ = queue_.front();
  queue_.pop_front();
  ++positions_;
  return true;
}

SeedSampler::SeedSampler(const std::vector<LabeledVolume>& volumes, const FfnOptions& options, const std::string& where)
    : volumes_(&volumes) {
  const auto reach = options.training_reach();
  for (size_t k = 0; k < volumes.size(); ++k) {
    const LabeledVolume& v = volumes[k];
    for (int64_t d = reach[0]; d + reach[0] < v.size[0]; ++d)
      for (int64_t h = reach[1]; h + reach[1] < v.size[1]; ++h)
        for (int64_t w = reach[2]; w + reach[2] < v.size[2]; ++w) {
          const int64_t i = v.index({d, h, w});
          if (v.ids[static_cast<size_t>(i)] != 0) candidates_.emplace_back(static_cast<uint32_t>(k), i);
        }
  }
  if (candidates_.empty()) {
    const std::string need = std::to_string(2 * reach[0] + 1) + "x" + std::to_string(2 * reach[1] + 1) + "x" +
                             std::to_string(2 * reach[2] + 1);
    throw ConfigError(where, "no voxel of the " + std::to_string(volumes.size()) +
                                 " volume(s) can seed a training example: an example needs an object voxel with " +
                                 need +
                                 " voxels around it (the FOV plus fov_moves·delta each way); use larger "
                                 "volumes, a smaller fov or fewer fov_moves");
  }
}

SeedSampler::Seed SeedSampler::pick(uint64_t random_bits) const {
  const auto& [volume, index] = candidates_[static_cast<size_t>(random_bits % candidates_.size())];
  const auto& size = (*volumes_)[volume].size;
  return {volume, {index / (size[1] * size[2]), index / size[2] % size[1], index % size[2]}};
}

}  // namespace tessera::ffn
