#pragma once
// A fixed set of seeds as a dataset: each sample is a seed's first FOV, before any prediction
// moved it or filled its object map.
#include <memory>
#include <vector>

#include "tessera/ffn/fov_example.hpp"
#include "tessera/io/dataset.hpp"

namespace tessera::ffn {

/// `count` seeds drawn once from `seed` (SeedSampler) over `volumes`. A sample's inputs are the
/// image and the seed-only object map of its first FOV ([F_D, F_H, F_W, 2]), its targets the
/// seed's object there ([F_D, F_H, F_W, 1], soft labels): the loss on them measures how much of
/// its object the network finds from the seed alone, what validation reports for an FFN run.
/// It also gives a run the shapes and the length of its epochs (FovTrainingSource supplies the
/// training FOVs). Samples are never split in space.
class SeedFovDataset : public io::Dataset {
 public:
  SeedFovDataset(std::shared_ptr<const std::vector<LabeledVolume>> volumes, const FfnOptions& options, int64_t count,
                 uint64_t seed, std::string source, const std::string& where);

  std::string describe() const override;
  int64_t size() const override { return static_cast<int64_t>(seeds_.size()); }
  Shape sample_shape() const override;
  Shape target_shape() const override;
  bool targets_per_voxel() const override { return true; }
  void load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
            const Tensor& targets) override;

  const std::vector<LabeledVolume>& volumes() const { return *volumes_; }

 private:
  std::shared_ptr<const std::vector<LabeledVolume>> volumes_;
  FfnOptions options_;
  std::vector<SeedSampler::Seed> seeds_;
  std::string source_;
};

}  // namespace tessera::ffn
