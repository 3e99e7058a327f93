#include "hdf5_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::io::hdf5 {
namespace {

std::string dims_str(const std::vector<hsize_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

herr_t collect_message(unsigned, const H5E_error2_t* error, void* data) {
  auto& messages = *static_cast<std::vector<std::string>*>(data);
  if (error->desc && *error->desc) {
    const std::string text = error->desc;
    bool seen = false;
    for (const auto& m : messages) seen = seen || m == text;
    if (!seen) messages.push_back(text);
  }
  return 0;
}

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->push_back(name);
  return 0;
}

/// "inputs, targets" — what the root group of a file holds, for "does not exist" errors.
std::string root_members(hid_t file) {
  std::vector<std::string> names;
  hsize_t index = 0;
  H5Literate(file, H5_INDEX_NAME, H5_ITER_NATIVE, &index, collect_name, &names);
  H5Eclear2(H5E_DEFAULT);
  if (names.empty()) return "nothing";
  std::string s;
  for (size_t i = 0; i < names.size() && i < 12; ++i) s += (i ? ", " : "") + ("'" + names[i] + "'");
  if (names.size() > 12) s += ", ...";
  return s;
}

/// "float64", "uint16", "a string", ... for messages about unsupported types.
std::string describe_type(hid_t type) {
  const size_t bits = 8 * H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: return std::string(H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(bits);
    case H5T_FLOAT: return "float" + std::to_string(bits);
    case H5T_STRING: return "a string type";
    case H5T_COMPOUND: return "a compound type";
    case H5T_ENUM: return "an enum type";
    case H5T_ARRAY: return "an array type";
    case H5T_VLEN: return "a variable-length type";
    default: return "an unsupported type class";
  }
}

[[noreturn]] void dataset_error(const std::string& path, const std::string& name, const std::string& problem) {
  throw IoError(path + ": dataset '" + name + "': " + problem);
}

struct DatasetInfo {
  Handle dataset;
  ElementType type = ElementType::float32;
  std::vector<hsize_t> dims;
};

DatasetInfo open_dataset(hid_t file, const std::string& path, const std::string& name) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    dataset_error(path, name, "does not exist (the file holds " + root_members(file) + ")");
  }
  DatasetInfo info;
  info.dataset = Handle(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  if (!info.dataset.valid()) dataset_error(path, name, "cannot be opened as a dataset: " + error_text());
  Handle type(H5Dget_type(info.dataset.get()));
  if (!type.valid()) dataset_error(path, name, "has an unreadable type: " + error_text());
  const H5T_class_t cls = H5Tget_class(type.get());
  const size_t size = H5Tget_size(type.get());
  const bool is_signed = cls == H5T_INTEGER && H5Tget_sign(type.get()) != H5T_SGN_NONE;
  if (cls == H5T_INTEGER && size == 1 && !is_signed)
    info.type = ElementType::uint8;
  else if (cls == H5T_INTEGER && size == 2 && is_signed)
    info.type = ElementType::int16;
  else if (cls == H5T_INTEGER && size == 4 && is_signed)
    info.type = ElementType::int32;
  else if (cls == H5T_FLOAT && size == 4)
    info.type = ElementType::float32;
  else
    dataset_error(path, name, "has type " + describe_type(type.get()) +
                                  "; supported element types are uint8, int16, int32 and float32");
  // A damaged chunk index may claim chunks far larger than the file, and HDF5 allocates a
  // stored chunk's size to read it; the data of a dataset without external files lies inside
  // its file.
  Handle creation(H5Dget_create_plist(info.dataset.get()));
  hsize_t file_size = 0;
  if (creation.valid() && H5Pget_external_count(creation.get()) == 0 && H5Fget_filesize(file, &file_size) >= 0) {
    const hsize_t stored = H5Dget_storage_size(info.dataset.get());
    if (stored > file_size)
      dataset_error(path, name,
                    "claims " + std::to_string(stored) + " bytes of stored data in a file of " +
                        std::to_string(file_size) + " bytes (a damaged chunk index?)");
  }
  H5Eclear2(H5E_DEFAULT);
  Handle space(H5Dget_space(info.dataset.get()));
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank < 0) dataset_error(path, name, "has an unreadable shape: " + error_text());
  info.dims.resize(static_cast<size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), info.dims.data(), nullptr);
  return info;
}

/// Throws unless the dataset holds a count of samples and per-sample values that sizes and
/// buffers computed from them (in int64 bytes) can hold. A file's shape is input: a damaged or
/// hostile header may claim 2^62 channels in a file of a few hundred bytes.
void require_sample_size(const std::string& path, const std::string& name, const std::vector<hsize_t>& dims,
                         bool stacked) {
  constexpr hsize_t kMaxSampleValues = hsize_t{1} << 40;  // 4 TiB of float32 per sample
  constexpr hsize_t kMaxSamples = hsize_t{1} << 40;
  if (stacked && !dims.empty() && dims[0] > kMaxSamples)
    dataset_error(path, name,
                  "has shape " + dims_str(dims) + ": more than " + std::to_string(kMaxSamples) + " samples");
  hsize_t values = 1;
  for (size_t i = stacked ? 1 : 0; i < dims.size(); ++i) {
    if (dims[i] != 0 && values > kMaxSampleValues / dims[i])
      dataset_error(
          path, name,
          "has shape " + dims_str(dims) + ": a sample of more than " + std::to_string(kMaxSampleValues) + " values");
    values *= dims[i];
  }
}

Shape shape_of(std::vector<hsize_t>::const_iterator first, std::vector<hsize_t>::const_iterator last) {
  std::vector<int64_t> dims;
  for (auto it = first; it != last; ++it) dims.push_back(static_cast<int64_t>(*it));
  return Shape(dims);
}

}  // namespace

std::mutex& library_mutex() {
  static std::mutex m;
  return m;
}

void initialise() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::lock_guard<std::mutex> lock(library_mutex());
    H5open();
  });
  std::lock_guard<std::mutex> lock(library_mutex());
  // Per thread in thread-safe builds, process-wide otherwise: either way it is off for us.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    other.id_ = -1;
  }
  return *this;
}

void Handle::reset() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: break;
  }
  id_ = -1;
}

std::string error_text() {
  std::vector<std::string> messages;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_message, &messages);
  H5Eclear2(H5E_DEFAULT);
  std::string text;
  for (size_t i = 0; i < messages.size() && i < 2; ++i) text += (i ? "; " : "") + messages[i];
  return text.empty() ? "HDF5 gave no reason" : text;
}

std::string file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return "does not exist";
    if (errno == ELOOP) return "cannot be reached: a loop of symbolic links";
    return std::string("cannot be reached (") + std::strerror(errno) + ")";
  }
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode))
    return std::string("is not a regular file (") +
           (S_ISFIFO(st.st_mode)   ? "a FIFO"
            : S_ISSOCK(st.st_mode) ? "a socket"
                                   : "a device") +
           ")";
  if (::access(path.c_str(), R_OK) != 0) return std::string("is not readable (") + std::strerror(errno) + ")";
  return "";
}

Handle open_file(const std::string& path) {
  if (const std::string problem = file_problem(path); !problem.empty())
    throw IoError(path + ": cannot open the data file: it " + problem);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (file.valid()) return file;
  const std::string why = error_text();
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  H5Eclear2(H5E_DEFAULT);
  if (is_hdf5 == 0) {
    struct stat st {};
    ::stat(path.c_str(), &st);  // a regular file: file_problem found it
    throw IoError(path + ": not an HDF5 file (no HDF5 signature; " + std::to_string(st.st_size) + " bytes)");
  }
  throw IoError(path + ": HDF5 cannot open the file (damaged or truncated?): " + why);
}

FileContents inspect(hid_t file, const std::string& path, const std::string& input_name,
                     const std::string& target_name) {
  FileContents c;
  const DatasetInfo in = open_dataset(file, path, input_name);
  const auto& d = in.dims;
  if (d.size() != 4 && d.size() != 5)
    dataset_error(path, input_name, "has shape " + dims_str(d) +
                                        "; expected one sample [D, H, W, C] or samples [N, D, H, W, C]");
  for (const hsize_t n : d)
    if (n == 0) dataset_error(path, input_name, "has shape " + dims_str(d) + ", which holds no values");
  require_sample_size(path, input_name, d, d.size() == 5);
  c.stacked = d.size() == 5;
  c.samples = c.stacked ? static_cast<int64_t>(d[0]) : 1;
  c.schema.input = shape_of(d.begin() + (c.stacked ? 1 : 0), d.end());
  c.schema.input_type = in.type;

  const DatasetInfo t = open_dataset(file, path, target_name);
  const auto& td = t.dims;
  if (c.stacked && (td.empty() || static_cast<int64_t>(td[0]) != c.samples))
    dataset_error(path, target_name, "has shape " + dims_str(td) + " but '" + input_name + "' holds " +
                                         std::to_string(c.samples) + " samples; expected [" +
                                         std::to_string(c.samples) + ", ...]: one target row per sample");
  require_sample_size(path, target_name, td, c.stacked);
  std::vector<hsize_t> per(td.begin() + (c.stacked ? 1 : 0), td.end());
  const Shape& s = c.schema.input;
  const bool voxel_shape = per.size() >= 3 && static_cast<int64_t>(per[0]) == s[0] &&
                           static_cast<int64_t>(per[1]) == s[1] && static_cast<int64_t>(per[2]) == s[2];
  if (per.size() <= 1) {
    c.schema.target = per.empty() ? Shape{1} : Shape{static_cast<int64_t>(per[0])};
  } else if ((per.size() == 3 || per.size() == 4) && voxel_shape) {
    c.schema.target = shape_of(per.begin(), per.end());
    c.schema.targets_per_voxel = true;
  } else {
    dataset_error(path, target_name, "has per-sample shape " + dims_str(per) +
                                         "; expected [T] values per sample, or [D, H, W] or [D, H, W, K] per voxel "
                                         "with the inputs' D, H, W " +
                                         dims_str({static_cast<hsize_t>(s[0]), static_cast<hsize_t>(s[1]),
                                                   static_cast<hsize_t>(s[2])}));
  }
  if (c.schema.target.numel() == 0) dataset_error(path, target_name, "has shape " + dims_str(td) + ", which holds no values");
  c.schema.target_type = t.type;
  return c;
}

hid_t memory_type(ElementType type) {
  switch (type) {
    case ElementType::uint8: return H5T_NATIVE_UINT8;
    case ElementType::int16: return H5T_NATIVE_INT16;
    case ElementType::int32: return H5T_NATIVE_INT32;
    case ElementType::float32: return H5T_NATIVE_FLOAT;
  }
  return H5T_NATIVE_FLOAT;
}

void read_sample(hid_t dataset, bool stacked, int64_t index, bool cut, const parallel::Box& box, ElementType type,
                 void* out, const std::string& path, const std::string& name) {
  Handle file_space(H5Dget_space(dataset));
  const int rank = file_space.valid() ? H5Sget_simple_extent_ndims(file_space.get()) : -1;
  if (rank < 0) dataset_error(path, name, "has an unreadable shape: " + error_text());
  std::vector<hsize_t> dims(static_cast<size_t>(rank)), start(static_cast<size_t>(rank), 0), count;
  if (rank > 0) H5Sget_simple_extent_dims(file_space.get(), dims.data(), nullptr);
  count = dims;
  const size_t first = stacked ? 1 : 0;
  if (stacked) {
    start[0] = static_cast<hsize_t>(index);
    count[0] = 1;
  }
  if (cut)
    for (size_t k = 0; k < 3; ++k) {
      start[first + k] = static_cast<hsize_t>(box.offset[k]);
      count[first + k] = static_cast<hsize_t>(box.extent[k]);
    }
  hsize_t values = 1;
  for (const hsize_t n : count) values *= n;
  if (rank > 0 &&
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0)
    dataset_error(path, name, "cannot select sample " + std::to_string(index) + " box " + box.str() + ": " + error_text());
  Handle memory_space(H5Screate_simple(1, &values, nullptr));
  if (H5Dread(dataset, memory_type(type), memory_space.get(), file_space.get(), H5P_DEFAULT, out) < 0)
    dataset_error(path, name, "reading sample " + std::to_string(index) + (cut ? " box " + box.str() : "") +
                                  " failed: " + error_text());
}

}  // namespace tessera::io::hdf5
