#pragma once
// What a flood-filling network's run adds to a standard training run: the "ffn" section, its
// volumes and seeds as datasets, and the moving FOVs as the training batches.
#include <memory>
#include <vector>

#include "tessera/ffn/ffn_options.hpp"
#include "tessera/ffn/labeled_volume.hpp"
#include "tessera/train/run_extension.hpp"

namespace tessera::ffn {

/// A TrainingRun extension for configs with an "ffn" section (examples/ffn/README.md). Its
/// "data" section names volumes with object ids:
///   {"source": "hdf5", "sample_list": "<train.txt>", "instances": "instances",
///    "normalize": {...} (as an HDF5 data section's), "seeds": 1024,
///    "validation": {"sample_list": "<validation.txt>", "seeds": 64}}
/// Training runs FovTrainingSource over the training volumes; an epoch is seeds / batch steps.
/// Validation reports the loss on the first FOV of a fixed set of validation seeds.
class FfnRun : public train::RunExtension {
 public:
  std::string section() const override { return "ffn"; }
  void configure(ConfigObject* section) override;
  io::DataSplit make_datasets(ConfigObject& data, const train::TrainingOptions& options,
                              const model::Model& model) override;
  std::unique_ptr<train::BatchSource> training_source(train::Trainer& trainer) override;

  const FfnOptions& options() const { return options_; }
  /// The training volumes, once make_datasets() read them.
  const std::shared_ptr<const std::vector<LabeledVolume>>& training_volumes() const { return training_; }

 private:
  FfnOptions options_;
  std::shared_ptr<const std::vector<LabeledVolume>> training_;
  uint64_t seed_ = 0;
};

}  // namespace tessera::ffn
