#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/core/tensor.hpp"

namespace tessera::io {

/// A collection of (input, target) samples addressed by global index. Batches are assembled
/// from any list of indices, so shuffling and sharding are decided outside the dataset.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::string describe() const = 0;
  virtual int64_t size() const = 0;
  /// Per-sample input shape, channels-last ([D, H, W, C]).
  virtual Shape sample_shape() const = 0;
  /// Per-sample target shape ([4] for four regression targets).
  virtual Shape target_shape() const = 0;
  /// Writes samples `indices` into rows 0..indices.size()-1 of `inputs` and `targets`.
  virtual void load(const std::vector<int64_t>& indices, const Tensor& inputs, const Tensor& targets) = 0;
};

/// The training and validation sets described by a config's "data" section.
struct DataSplit {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> validation;  // may be null
};

/// Builds the datasets of a "data" section ({"source": "synthetic_fields", ...}).
DataSplit make_datasets(ConfigObject& cfg, uint64_t seed);

}  // namespace tessera::io
