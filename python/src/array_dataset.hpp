#pragma once
#include <memory>
#include <string>

#include <pybind11/numpy.h>

#include "tessera/io/dataset.hpp"
#include "tessera/train/run_extension.hpp"

namespace tessera::python {

/// A data set over two numpy arrays the caller keeps: inputs [N, ...sample] (channels-last,
/// as the model's input) and targets [N, ...] (per sample: [N] or [N, T]; per voxel: [N, D, H,
/// W] or [N, D, H, W, K] for 3D samples, [N, H, W(, K)] for 2D ones). Batches are copied from
/// the arrays' memory as they are read; nothing is copied up front. Holds references to both
/// arrays, so it must be destroyed with the GIL held.
class ArrayDataset final : public io::Dataset {
 public:
  /// Refuses (ArrayError, naming `inputs_name` / `targets_name`) arrays that are not
  /// C-contiguous float32, or whose first dimensions differ, and inputs holding values that
  /// are not finite (as the HDF5 reader refuses them in files), before anything trains on them.
  ArrayDataset(const pybind11::handle& inputs, const pybind11::handle& targets, const std::string& inputs_name,
               const std::string& targets_name);
  std::string describe() const override;
  int64_t size() const override { return samples_; }
  Shape sample_shape() const override { return sample_; }
  Shape target_shape() const override { return target_; }
  bool targets_per_voxel() const override { return per_voxel_; }
  void load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
            const Tensor& targets) override;

 private:
  /// Counts the input values that are NaN or infinite in one pass, without a temporary array
  /// (the arrays of this field run to many GiB), and names the first sample holding one.
  void refuse_values_that_are_not_finite(const std::string& inputs_name) const;

  pybind11::array_t<float> inputs_, targets_;
  std::string name_;
  int64_t samples_ = 0;
  Shape sample_, target_;
  bool per_voxel_ = false;
  std::vector<float> staging_;  // one batch on the host, where the model's memory is not
};

/// The run extension that gives a TrainingRun its training (and validation) set from numpy
/// arrays instead of the config's "data" section, which must then be empty.
class ArrayData final : public train::RunExtension {
 public:
  ArrayData(std::unique_ptr<io::Dataset> train, std::unique_ptr<io::Dataset> validation)
      : train_(std::move(train)), validation_(std::move(validation)) {}
  /// No config section of its own: a key nobody writes.
  std::string section() const override { return "$python_arrays"; }
  void configure(ConfigObject* /*section*/) override {}
  io::DataSplit make_datasets(ConfigObject& data, const train::TrainingOptions& options,
                              const model::Model& model) override;
  std::unique_ptr<train::BatchSource> training_source(train::Trainer& /*trainer*/) override { return nullptr; }

 private:
  std::unique_ptr<io::Dataset> train_, validation_;
};

}  // namespace tessera::python
