#include "array_dataset.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>

#include "arrays.hpp"
#include "errors.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/kokkos_compat.hpp"

namespace py = pybind11;

namespace tessera::python {

ArrayDataset::ArrayDataset(const py::handle& inputs, const py::handle& targets, const std::string& inputs_name,
                           const std::string& targets_name)
    : inputs_(float32_array(inputs, inputs_name)), targets_(float32_array(targets, targets_name)), name_(inputs_name) {
  if (inputs_.ndim() < 2)
    throw ArrayError(inputs_name, "shape " + shape_of(inputs_).str() +
                                      ": expected [samples, ...one sample], channels-last ([N, D, H, W, C], [N, H, W, "
                                      "C] or [N, features])");
  if (targets_.ndim() < 1 || targets_.shape(0) != inputs_.shape(0))
    throw ArrayError(targets_name, "shape " + shape_of(targets_).str() + " does not start with the " +
                                       std::to_string(inputs_.shape(0)) + " samples of " + inputs_name + " " +
                                       shape_of(inputs_).str());
  if (inputs_.shape(0) == 0) throw ArrayError(inputs_name, "holds no samples");
  samples_ = inputs_.shape(0);
  const std::vector<int64_t> whole = shape_of(inputs_).dims(), all_targets = shape_of(targets_).dims();
  sample_ = Shape(std::vector<int64_t>(whole.begin() + 1, whole.end()));
  std::vector<int64_t> per_sample(all_targets.begin() + 1, all_targets.end());
  // A volume sample [D, H, W, C] or an image [H, W, C]: targets that start with its spatial
  // extents are per voxel (an image is a volume of depth 1, as Dataset::spatial_size says).
  const int spatial = sample_.rank() >= 3 ? sample_.rank() - 1 : 0;
  bool voxels = spatial > 0 && static_cast<int>(per_sample.size()) >= spatial &&
                static_cast<int>(per_sample.size()) <= spatial + 1;
  for (int a = 0; voxels && a < spatial; ++a) voxels = per_sample[static_cast<size_t>(a)] == sample_[a];
  per_voxel_ = voxels;
  if (per_voxel_ && spatial == 2) per_sample.insert(per_sample.begin(), 1);  // [1, H, W(, K)]
  if (per_sample.empty()) per_sample.push_back(1);                           // class indices [N]
  if (!per_voxel_ && per_sample.size() > 1) {
    int64_t values = 1;
    for (int64_t d : per_sample) values *= d;
    per_sample = {values};
  }
  target_ = Shape(per_sample);
  refuse_values_that_are_not_finite(inputs_name);
}

void ArrayDataset::refuse_values_that_are_not_finite(const std::string& inputs_name) const {
  const float* values = inputs_.data();
  const int64_t count = inputs_.size(), per_sample = sample_.numel();
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(values[i]) && bad++ == 0) first = i / per_sample;
  if (bad > 0)
    throw ArrayError(
        inputs_name,
        std::to_string(bad) + " values are not finite (NaN or infinite), the first in sample " + std::to_string(first));
}

std::string ArrayDataset::describe() const {
  return "numpy arrays (" + name_ + "): " + std::to_string(samples_) + " samples of " + sample_.str() + ", targets " +
         target_.str() + (per_voxel_ ? " per voxel" : "");
}

void ArrayDataset::load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
                        const Tensor& targets) {
  const auto size = spatial_size();
  const int64_t channels = sample_[sample_.rank() - 1];
  const int64_t target_channels = per_voxel_ ? target_.numel() / (size[0] * size[1] * size[2]) : 0;
  const int64_t target_values = per_voxel_ ? box.volume() * target_channels : target_.numel();
  const auto rows = static_cast<int64_t>(indices.size());
  io::check_load_arguments(name_, size, box, rows, inputs, channels, targets, target_values);
  const int64_t input_values = box.volume() * (sample_.rank() >= 3 ? channels : sample_.numel());
  constexpr bool host_memory = Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible;

  // Copies the box of every row of `source` (a sample of `size` voxels of `per_voxel` values)
  // into `out`.
  auto gather = [&](const float* source, int64_t per_voxel, int64_t sample_values, float* out) {
    const int64_t line = box.extent[2] * per_voxel;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t index = indices[static_cast<size_t>(r)];
      if (index < 0 || index >= samples_)
        throw Error(name_ + ": sample " + std::to_string(index) + " asked for, the arrays hold " +
                    std::to_string(samples_));
      const float* sample = source + index * sample_values;
      for (int64_t z = 0; z < box.extent[0]; ++z)
        for (int64_t y = 0; y < box.extent[1]; ++y) {
          const int64_t at =
              (((box.offset[0] + z) * size[1] + box.offset[1] + y) * size[2] + box.offset[2]) * per_voxel;
          std::copy(sample + at, sample + at + line, out);
          out += line;
        }
    }
  };
  auto deliver = [&](const Tensor& tensor, int64_t count, const std::function<void(float*)>& fill) {
    if constexpr (host_memory) {
      fill(tensor.data());
    } else {
      staging_.resize(static_cast<size_t>(count));
      fill(staging_.data());
      copy_into(tensor, 0, staging_.data(), count);
    }
  };
  const int64_t sample_values = sample_.numel();
  const int64_t input_per_voxel = sample_.rank() >= 3 ? channels : sample_values;
  deliver(inputs, rows * input_values,
          [&](float* out) { gather(inputs_.data(), input_per_voxel, sample_values, out); });
  if (per_voxel_) {
    deliver(targets, rows * target_values,
            [&](float* out) { gather(targets_.data(), target_channels, target_.numel(), out); });
  } else {
    deliver(targets, rows * target_values, [&](float* out) {
      for (int64_t r = 0; r < rows; ++r) {
        const float* sample = targets_.data() + indices[static_cast<size_t>(r)] * target_values;
        out = std::copy(sample, sample + target_values, out);
      }
    });
  }
}

io::DataSplit ArrayData::make_datasets(ConfigObject& data, const train::TrainingOptions& /*options*/,
                                       const model::Model& /*model*/) {
  data.finish();  // the package refuses a "data" section beside arrays; nothing to read
  if (!train_) throw Error("the training arrays were already used by another run");
  io::DataSplit split;
  split.train = std::move(train_);
  split.validation = std::move(validation_);
  return split;
}

}  // namespace tessera::python
