#include "tessera/ffn/labeled_volume.hpp"

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#ifdef TESSERA_HAVE_HDF5
#include "tessera/io/hdf5_layout.hpp"
#include "tessera/io/hdf5_sample_array.hpp"
#endif

namespace tessera::ffn {

bool LabeledVolume::contains(const Voxel& v) const {
  for (size_t a = 0; a < 3; ++a)
    if (v[a] < 0 || v[a] >= size[a]) return false;
  return true;
}

#ifdef TESSERA_HAVE_HDF5
LabeledVolume read_labeled_volume(const std::string& path, int64_t sample, const std::string& instances,
                                  const io::Normalization& n, const std::string& where) {
  const io::SampleArray image = io::read_sample_array(path, "inputs", sample);
  const Shape& s = image.shape;
  if (s.rank() != 4 || s[3] != 1)
    throw IoError(path + ": dataset 'inputs' holds samples " + s.str() +
                  "; a volume of one channel [D, H, W, 1] "
                  "was expected");
  LabeledVolume v;
  v.size = {s[0], s[1], s[2]};
  v.image.resize(image.values.size());
  const std::vector<float> c = n.coefficients(1, where);  // scale, shift
  const bool log1p = n.transform == io::Normalization::Transform::log1p;
  for (size_t i = 0; i < v.image.size(); ++i) {
    const double x = log1p ? std::log1p(image.values[i]) : image.values[i];
    v.image[i] = static_cast<float>(x) * c[0] + c[1];
  }
  if (instances.empty()) return v;
  const io::SampleArray ids = io::read_sample_array(path, instances, sample);
  if (ids.shape.numel() != s[0] * s[1] * s[2] || ids.shape[0] != s[0])
    throw IoError(path + ": dataset '" + instances + "' holds " + ids.shape.str() + ", not one id per voxel of " +
                  s.str());
  v.ids.resize(ids.values.size());
  for (size_t i = 0; i < v.ids.size(); ++i) {
    const double id = ids.values[i];
    if (!(id >= 0 && id <= 4294967295.0) || id != static_cast<double>(static_cast<uint32_t>(id)))
      throw IoError(path + ": dataset '" + instances + format("': value %g at voxel %zu is not an object id", id, i));
    v.ids[i] = static_cast<uint32_t>(id);
  }
  return v;
}

std::vector<LabeledVolume> read_labeled_volumes(const std::string& sample_list, const std::string& instances,
                                                const io::Normalization& normalization, const std::string& where) {
  const auto layout = io::Hdf5Layout::from_sample_list(sample_list, io::Hdf5Layout::Names{}, false);
  std::vector<LabeledVolume> volumes;
  for (const auto& file : layout.files())
    for (int64_t s = 0; s < file.samples; ++s)
      volumes.push_back(read_labeled_volume(file.path, s, instances, normalization, where));
  return volumes;
}
#else
LabeledVolume read_labeled_volume(const std::string& path, int64_t, const std::string&, const io::Normalization&,
                                  const std::string& where) {
  throw ConfigError(where, "reading " + path +
                               " needs HDF5, which this build of Tessera lacks (configure with "
                               "-DTESSERA_ENABLE_HDF5=ON)");
}

std::vector<LabeledVolume> read_labeled_volumes(const std::string& sample_list, const std::string&,
                                                const io::Normalization&, const std::string& where) {
  throw ConfigError(where, "reading " + sample_list +
                               " needs HDF5, which this build of Tessera lacks (configure with "
                               "-DTESSERA_ENABLE_HDF5=ON)");
}
#endif

}  // namespace tessera::ffn
