#include "tessera/io/hdf5_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "hdf5_support.hpp"
#include "tessera/core/error.hpp"

namespace tessera::io {
namespace {

/// Little-endian file types, so files read the same everywhere.
hid_t file_type(ElementType type) {
  switch (type) {
    case ElementType::uint8: return H5T_STD_U8LE;
    case ElementType::int16: return H5T_STD_I16LE;
    case ElementType::int32: return H5T_STD_I32LE;
    case ElementType::float32: return H5T_IEEE_F32LE;
  }
  return H5T_IEEE_F32LE;
}

std::vector<hsize_t> dims_of(const Shape& per_sample, bool stacked, int64_t samples) {
  std::vector<hsize_t> dims;
  if (stacked) dims.push_back(static_cast<hsize_t>(samples));
  for (const int64_t d : per_sample.dims()) dims.push_back(static_cast<hsize_t>(d));
  return dims;
}

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

struct Hdf5SampleWriter::Handles {
  hdf5::Handle file, inputs, targets;
  std::vector<hdf5::Handle> extras;
};

Hdf5SampleWriter::Hdf5SampleWriter(const std::string& path, const SampleSchema& schema, int64_t samples,
                                   const Options& options)
    : path_(path),
      temporary_(path + ".tmp." + std::to_string(::getpid())),
      schema_(schema),
      samples_(samples),
      options_(options),
      handles_(std::make_unique<Handles>()) {
  if (samples < 1 || (!options.stacked && samples != 1))
    throw Error(path + ": a data file holds at least one sample, and exactly one when not stacked; asked for " +
                std::to_string(samples));
  hdf5::initialise();
  std::lock_guard<std::mutex> lock(hdf5::library_mutex());
  hdf5::Handle access(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  handles_->file = hdf5::Handle(H5Fcreate(temporary_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()));
  if (!handles_->file.valid())
    throw IoError(path + ": cannot create the temporary file " + temporary_ + ": " + hdf5::error_text());
  auto create = [&](const std::string& name, const Shape& per_sample, ElementType type) {
    const auto dims = dims_of(per_sample, options_.stacked, samples_);
    hdf5::Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
    hdf5::Handle create(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_fill_time(create.get(), H5D_FILL_TIME_NEVER);  // every value is written
    if (options_.checksum) {
      auto chunk = dims;
      if (options_.stacked) chunk[0] = 1;
      H5Pset_chunk(create.get(), static_cast<int>(chunk.size()), chunk.data());
      H5Pset_fletcher32(create.get());
    }
    hdf5::Handle dataset(H5Dcreate2(handles_->file.get(), name.c_str(), file_type(type), space.get(), H5P_DEFAULT,
                                    create.get(), H5P_DEFAULT));
    if (!dataset.valid())
      throw IoError(path + ": dataset '" + name + "': cannot create it: " + hdf5::error_text());
    return dataset;
  };
  try {
    handles_->inputs = create(options_.input_dataset, schema_.input, schema_.input_type);
    handles_->targets = create(options_.target_dataset, schema_.target, schema_.target_type);
    for (const SampleSchema::Extra& e : schema_.extras) handles_->extras.push_back(create(e.name, e.shape, e.type));
  } catch (...) {
    handles_.reset();
    std::remove(temporary_.c_str());
    throw;
  }
}

Hdf5SampleWriter::~Hdf5SampleWriter() {
  if (committed_) return;
  {
    std::lock_guard<std::mutex> lock(hdf5::library_mutex());
    handles_.reset();
  }
  std::remove(temporary_.c_str());
}

void Hdf5SampleWriter::write(int64_t index, const void* inputs, const void* targets,
                             const std::vector<const void*>& extras) {
  if (index < 0 || index >= samples_)
    throw Error(path_ + ": sample " + std::to_string(index) + " out of range [0, " + std::to_string(samples_) + ")");
  if (extras.size() != schema_.extras.size())
    throw Error(path_ + ": sample " + std::to_string(index) + " comes with " + std::to_string(extras.size()) +
                " extra arrays; the schema has " + std::to_string(schema_.extras.size()));
  std::lock_guard<std::mutex> lock(hdf5::library_mutex());
  auto put = [&](const hdf5::Handle& dataset, const std::string& name, const Shape& per_sample, ElementType type,
                 const void* data) {
    hdf5::Handle file_space(H5Dget_space(dataset.get()));
    if (options_.stacked) {
      auto start = std::vector<hsize_t>(static_cast<size_t>(per_sample.rank()) + 1, 0);
      auto count = dims_of(per_sample, true, 1);
      start[0] = static_cast<hsize_t>(index);
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    }
    const auto values = static_cast<hsize_t>(per_sample.numel());
    hdf5::Handle memory_space(H5Screate_simple(1, &values, nullptr));
    if (H5Dwrite(dataset.get(), hdf5::memory_type(type), memory_space.get(), file_space.get(), H5P_DEFAULT, data) < 0)
      throw IoError(path_ + ": dataset '" + name + "': writing sample " + std::to_string(index) +
                    " failed: " + hdf5::error_text());
  };
  put(handles_->inputs, options_.input_dataset, schema_.input, schema_.input_type, inputs);
  put(handles_->targets, options_.target_dataset, schema_.target, schema_.target_type, targets);
  for (size_t i = 0; i < extras.size(); ++i) {
    const SampleSchema::Extra& e = schema_.extras[i];
    put(handles_->extras[i], e.name, e.shape, e.type, extras[i]);
  }
}

void Hdf5SampleWriter::set_attribute(const std::string& name, const std::string& value) {
  std::lock_guard<std::mutex> lock(hdf5::library_mutex());
  hdf5::Handle type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.get(), value.size() + 1);
  hdf5::Handle space(H5Screate(H5S_SCALAR));
  hdf5::Handle attribute(
      H5Acreate2(handles_->file.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attribute.valid() || H5Awrite(attribute.get(), type.get(), value.c_str()) < 0)
    throw IoError(path_ + ": cannot write the attribute '" + name + "': " + hdf5::error_text());
}

void Hdf5SampleWriter::commit() {
  {
    std::lock_guard<std::mutex> lock(hdf5::library_mutex());
    const hid_t file = handles_->file.get();
    handles_->extras.clear();
    handles_->targets.reset();
    handles_->inputs.reset();
    const herr_t flushed = H5Fflush(file, H5F_SCOPE_GLOBAL);
    const herr_t closed = H5Fclose(file);
    handles_->file = hdf5::Handle();  // closed above
    if (flushed < 0 || closed < 0) {
      const std::string why = hdf5::error_text();
      std::remove(temporary_.c_str());
      committed_ = true;
      throw IoError(path_ + ": finishing the file failed: " + why);
    }
  }
  committed_ = true;
  if (options_.durable) {
    const int fd = ::open(temporary_.c_str(), O_RDONLY);
    if (fd < 0 || ::fsync(fd) != 0) {
      const std::string why = std::strerror(errno);
      if (fd >= 0) ::close(fd);
      std::remove(temporary_.c_str());
      throw IoError(path_ + ": fsync of the temporary file failed: " + why);
    }
    ::close(fd);
  }
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary_.c_str());
    throw IoError(path_ + ": cannot rename the temporary file into place: " + why);
  }
  if (!options_.durable) return;
  const int folder = ::open(folder_of(path_).c_str(), O_RDONLY | O_DIRECTORY);
  if (folder >= 0) {
    ::fsync(folder);
    ::close(folder);
  }
}

void sync_file_system(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0 || ::syncfs(fd) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw IoError(folder + ": syncing the file system failed: " + why);
  }
  ::close(fd);
}

}  // namespace tessera::io
