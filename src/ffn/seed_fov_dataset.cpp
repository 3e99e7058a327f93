#include "tessera/ffn/seed_fov_dataset.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::ffn {

SeedFovDataset::SeedFovDataset(std::shared_ptr<const std::vector<LabeledVolume>> volumes, const FfnOptions& options,
                               int64_t count, uint64_t seed, std::string source, const std::string& where)
    : volumes_(std::move(volumes)), options_(options), source_(std::move(source)) {
  const SeedSampler sampler(*volumes_, options, where);
  const uint64_t stream = rng::stream_of("ffn seed set");
  for (int64_t i = 0; i < count; ++i) seeds_.push_back(sampler.pick(rng::bits(seed, stream, static_cast<uint64_t>(i))));
}

std::string SeedFovDataset::describe() const {
  const auto& f = options_.fov;
  return std::to_string(seeds_.size()) + " seeds in " + std::to_string(volumes_->size()) + " volumes of " + source_ +
         ", FOV " + std::to_string(f[0]) + "x" + std::to_string(f[1]) + "x" + std::to_string(f[2]);
}

Shape SeedFovDataset::sample_shape() const { return Shape{options_.fov[0], options_.fov[1], options_.fov[2], 2}; }
Shape SeedFovDataset::target_shape() const { return Shape{options_.fov[0], options_.fov[1], options_.fov[2], 1}; }

void SeedFovDataset::load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
                          const Tensor& targets) {
  const int64_t fov = options_.fov_voxels();
  const auto rows = static_cast<int64_t>(indices.size());
  io::check_load_arguments(describe(), options_.fov, box, rows, inputs, 2, targets, fov);
  if (box.volume() != fov)
    throw ConfigError("$.model.distribution",
                      "an FFN run splits the batch over ranks, not its FOVs: use a "
                      "distribution without depth, height or width");
  std::vector<float> in(static_cast<size_t>(inputs.numel()), 0.0f), out(static_cast<size_t>(targets.numel()), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const auto& s = seeds_.at(static_cast<size_t>(indices[static_cast<size_t>(r)]));
    const FovExample example((*volumes_)[s.volume], s.voxel, options_);
    example.write_inputs(in.data() + r * fov * 2);
    example.write_targets(out.data() + r * fov);
  }
  inputs.copy_from_host(in);
  targets.copy_from_host(out);
}

}  // namespace tessera::ffn
