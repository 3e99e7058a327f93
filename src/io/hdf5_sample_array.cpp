#include "tessera/io/hdf5_sample_array.hpp"

#include "hdf5_support.hpp"
#include "tessera/core/error.hpp"

namespace tessera::io {
namespace {

/// The dims of an open dataset.
std::vector<hsize_t> dims_of(hid_t dataset) {
  hdf5::Handle space(H5Dget_space(dataset));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(static_cast<size_t>(rank > 0 ? rank : 0));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

}  // namespace

SampleArray read_sample_array(const std::string& path, const std::string& name, int64_t sample) {
  hdf5::initialise();
  std::lock_guard<std::mutex> lock(hdf5::library_mutex());
  const hdf5::Handle file = hdf5::open_file(path);
  bool stacked = false;
  if (H5Lexists(file.get(), "inputs", H5P_DEFAULT) > 0) {
    const hdf5::Handle inputs(H5Dopen2(file.get(), "inputs", H5P_DEFAULT));
    stacked = inputs.valid() && dims_of(inputs.get()).size() == 5;
  }
  if (H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) <= 0)
    throw IoError(path + ": no dataset '" + name + "'");
  const hdf5::Handle dataset(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT));
  if (!dataset.valid()) throw IoError(path + ": dataset '" + name + "': cannot open it: " + hdf5::error_text());
  const std::vector<hsize_t> dims = dims_of(dataset.get());
  const int64_t samples = stacked && !dims.empty() ? static_cast<int64_t>(dims[0]) : 1;
  if (sample < 0 || sample >= samples)
    throw IoError(path + ": dataset '" + name + "' holds " + std::to_string(samples) + " sample(s); there is no sample " +
                  std::to_string(sample));
  std::vector<int64_t> shape;
  for (size_t k = stacked ? 1 : 0; k < dims.size(); ++k) shape.push_back(static_cast<int64_t>(dims[k]));
  if (shape.empty()) throw IoError(path + ": dataset '" + name + "' holds a scalar, not a sample array");
  SampleArray out{Shape(shape), {}};
  out.values.resize(static_cast<size_t>(out.shape.numel()));
  hdf5::Handle file_space(H5Dget_space(dataset.get()));
  if (stacked) {
    std::vector<hsize_t> start(dims.size(), 0), count = dims;
    start[0] = static_cast<hsize_t>(sample);
    count[0] = 1;
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  }
  const auto values = static_cast<hsize_t>(out.values.size());
  hdf5::Handle memory_space(H5Screate_simple(1, &values, nullptr));
  if (H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), H5P_DEFAULT,
              out.values.data()) < 0)
    throw IoError(path + ": dataset '" + name + "': reading sample " + std::to_string(sample) +
                  " failed: " + hdf5::error_text());
  return out;
}

}  // namespace tessera::io
