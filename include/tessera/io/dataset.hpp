#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/parallel/box.hpp"

namespace tessera::io {

/// A collection of (input, target) samples addressed by global index. Batches are assembled
/// from any list of indices, so shuffling and sharding are decided outside the dataset; under
/// a spatial split each rank asks only for its box of every sample.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::string describe() const = 0;
  virtual int64_t size() const = 0;
  /// Per-sample input shape, channels-last ([D, H, W, C]).
  virtual Shape sample_shape() const = 0;
  /// Per-sample target shape: [T] for T values per sample, or [D, H, W] / [D, H, W, K] for
  /// per-voxel targets (see targets_per_voxel()).
  virtual Shape target_shape() const = 0;
  /// True when targets are per voxel (and therefore cut by the box like the inputs).
  virtual bool targets_per_voxel() const { return false; }
  /// Writes the part `box` of samples `indices` into rows 0..indices.size()-1 of `inputs`
  /// ([n, box D, box H, box W, C]) and `targets` (per-sample targets whole, per-voxel targets
  /// cut by the same box).
  virtual void load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
                    const Tensor& targets) = 0;
  /// A hint: the next load() with these arguments will find its data ready (read in the
  /// background while the caller works). Datasets without I/O ignore it.
  virtual void prefetch(const std::vector<int64_t>& indices, const parallel::Box& box) {
    (void)indices;
    (void)box;
  }

  /// D, H, W of a sample ([D, H, W, C]; [H, W, C] has D = 1; feature vectors are 1×1×1).
  std::array<int64_t, 3> spatial_size() const;
  /// The whole of every sample: the box to load when samples are not split in space.
  parallel::Box whole_box() const { return parallel::Box::whole(spatial_size()); }
};

/// The training and validation sets described by a config's "data" section.
struct DataSplit {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> validation;  // may be null
};

/// Builds the datasets of a "data" section ({"source": "synthetic_fields" | "hdf5", ...};
/// docs/config.md lists the keys). `seed` is the run's seed, the default of "data.seed".
DataSplit make_datasets(ConfigObject& cfg, uint64_t seed);

/// The error of a command or data source that needs HDF5 in a build without it, at `where`.
ConfigError hdf5_missing(const std::string& where);

/// Throws ShapeError naming `who` unless `box` lies inside a sample of spatial size `size`
/// and `inputs` / `targets` hold at least `rows` rows of the box.
void check_load_arguments(const std::string& who, const std::array<int64_t, 3>& size, const parallel::Box& box,
                          int64_t rows, const Tensor& inputs, int64_t input_channels, const Tensor& targets,
                          int64_t target_values_per_row);

}  // namespace tessera::io
