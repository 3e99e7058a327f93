#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/io/cosmoflow_fields.hpp"
#include "tessera/io/sample_generator.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::io {

/// The samples of `tessera datagen cosmoflow`: CosmoFlowFields as stored (`type`), with their
/// four parameters θ as float32 targets. It measures what it makes, for the normalisation a
/// run config should use: per-channel moments of the stored values after the suggested
/// transform (log1p for counts), on every few voxels, and the counts clipped to the type's
/// maximum.
class CosmoFlowSamples final : public SampleGenerator {
 public:
  struct Options {
    CosmoFlowFields::Options fields;
    ElementType type = ElementType::int16;
    double mean_count = 64.0;  // particles per voxel at mean density, for integer types
  };
  /// What the samples made on every rank held, once they are all made.
  struct Statistics {
    std::vector<double> mean, std;  // per channel, after the transform
    double clipped = 0;             // counts clipped to the type's maximum
  };

  explicit CosmoFlowSamples(const Options& options);

  SampleSchema schema() const override;
  /// Throws ConfigError naming --mean-count for a sample with a channel whose every voxel
  /// holds the same count: that comes only from a mean count the stored type cannot express.
  void generate(int64_t index, const SampleBuffers& out) override;
  std::vector<std::pair<std::string, std::string>> attributes() const override;

  /// Whether the stored values are particle counts (normalised after log1p).
  bool counts() const { return options_.type != ElementType::float32; }
  /// The statistics of the samples every rank of `comm` made (collective).
  Statistics statistics(const parallel::Communicator& comm) const;

 private:
  double stored_value(const void* stored, size_t at) const;
  void require_information(const void* stored, int64_t index) const;
  void measure(const void* stored);

  Options options_;
  CosmoFlowFields fields_;
  int64_t volume_ = 0, stride_ = 1;
  std::vector<double> moments_;  // sums per channel, squares per channel, values, clipped
};

}  // namespace tessera::io
