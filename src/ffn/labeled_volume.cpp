#include "tessera/ffn/labeled_volume.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/io/dataset.hpp"
#ifdef TESSERA_HAVE_HDF5
#include "tessera/io/hdf5_layout.hpp"
#include "tessera/io/hdf5_sample_array.hpp"
#endif

namespace tessera::ffn {

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
  v.image = io::normalize_on_host(image.values, 1, n, where, path + ": dataset 'inputs'");
  if (instances.empty()) return v;
  const io::SampleArray ids = io::read_sample_array(path, instances, sample);
  if (ids.shape.numel() != s[0] * s[1] * s[2] || ids.shape[0] != s[0])
    throw IoError(path + ": dataset '" + instances + "' holds " + ids.shape.str() + ", not one id per voxel of " +
                  s.str());
  const int64_t bad = eval::labels_from_values(ids.values, v.ids);
  if (bad >= 0)
    throw IoError(path + ": dataset '" + instances +
                  format("': value %g at voxel %lld is not an object id", ids.values[static_cast<size_t>(bad)],
                         static_cast<long long>(bad)));
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
LabeledVolume read_labeled_volume(const std::string&, int64_t, const std::string&, const io::Normalization&,
                                  const std::string& where) {
  throw io::hdf5_missing(where);
}

std::vector<LabeledVolume> read_labeled_volumes(const std::string&, const std::string&, const io::Normalization&,
                                                const std::string& where) {
  throw io::hdf5_missing(where);
}
#endif

}  // namespace tessera::ffn
