#include "tessera/ffn/fov_training_source.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::ffn {
namespace {
const uint64_t kSeedStream = rng::stream_of("ffn training seeds");
}

FovTrainingSource::FovTrainingSource(std::shared_ptr<const std::vector<LabeledVolume>> volumes,
                                     const FfnOptions& options, uint64_t seed, int64_t first_slot, int64_t rows,
                                     int64_t global_rows, int64_t accumulate, const std::string& where)
    : volumes_(std::move(volumes)), options_(options), seed_(seed), sampler_(*volumes_, options, where), rows_(rows) {
  for (int64_t m = 0; m < accumulate; ++m)
    for (int64_t r = 0; r < rows; ++r) {
      Slot s;
      s.id = m * global_rows + first_slot + r;
      slots_.push_back(std::move(s));
    }
}

void FovTrainingSource::load(int64_t step, int64_t micro, const Tensor& inputs, const Tensor& targets) {
  (void)step;
  const int64_t fov = options_.fov_voxels();
  if (inputs.shape()[0] != rows_ || inputs.numel() != rows_ * fov * 2 || targets.numel() != rows_ * fov)
    throw ShapeError("FFN training: batches of " + inputs.shape().str() + " do not hold " + std::to_string(rows_) +
                     " FOVs of two channels");
  micro_ = micro;
  inputs_.resize(static_cast<size_t>(rows_ * fov * 2));
  targets_.resize(static_cast<size_t>(rows_ * fov));
  for (int64_t r = 0; r < rows_; ++r) {
    Slot& s = slots_[static_cast<size_t>(micro * rows_ + r)];
    if (!s.example) {
      const auto seed = sampler_.pick(
          rng::bits(seed_, kSeedStream + static_cast<uint64_t>(s.id), static_cast<uint64_t>(s.started++)));
      s.example.emplace((*volumes_)[seed.volume], seed.voxel, options_);
    }
    s.example->write_inputs(inputs_.data() + r * fov * 2);
    s.example->write_targets(targets_.data() + r * fov);
  }
  inputs.copy_from_host(inputs_);
  targets.copy_from_host(targets_);
}

void FovTrainingSource::observe(const Tensor& predictions) {
  const int64_t fov = options_.fov_voxels();
  if (predictions.numel() != rows_ * fov)
    throw ShapeError("FFN training: the model's output " + predictions.shape().str() +
                     " is not one logit per FOV voxel");
  const std::vector<float> logits = predictions.to_host();
  for (int64_t r = 0; r < rows_; ++r) {
    Slot& s = slots_[static_cast<size_t>(micro_ * rows_ + r)];
    if (s.example->advance(logits.data() + r * fov)) continue;
    ++finished_;
    finished_positions_ += s.example->positions();
    s.example.reset();
  }
}

}  // namespace tessera::ffn
