#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/io/cell_volumes.hpp"
#include "tessera/io/sample_generator.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::io {

/// The samples of `tessera datagen cells`: CellVolumes' uint8 images with their uint8 label
/// per voxel, and (the extra dataset "instances") each voxel's int32 cell id. It measures what it makes: the images' mean and spread, for the normalisation a
/// run config should use, and the membrane fraction of the training and of the validation
/// volumes (predicting "interior" everywhere scores a foreground IoU of 1 − that fraction:
/// the baseline a segmentation must beat).
class CellSamples final : public SampleGenerator {
 public:
  /// What the samples made on every rank held, once they are all made.
  struct Statistics {
    double mean = 0, std = 0;                            // of the image voxels
    double train_membrane = 0, validation_membrane = 0;  // fractions of the voxels
  };

  /// Samples from `train_samples` on are validation ones. Throws ConfigError for membranes
  /// thicker than a quarter of a cell or cells larger than the volume.
  CellSamples(const CellVolumes::Options& options, int64_t train_samples);

  SampleSchema schema() const override;
  void generate(int64_t index, const SampleBuffers& out) override;
  std::vector<std::pair<std::string, std::string>> attributes() const override;

  /// The statistics of the samples every rank of `comm` made (collective).
  Statistics statistics(const parallel::Communicator& comm) const;

 private:
  CellVolumes cells_;
  int64_t train_samples_;
  // Sum and sum of squares of the image, voxels; then voxels and membrane voxels of the
  // training and of the validation volumes.
  std::vector<double> moments_ = std::vector<double>(7, 0.0);
};

}  // namespace tessera::io
