#pragma once
// Data files for the HDF5 tests, written with the plain HDF5 C API (not Tessera's writer), so
// the reader is checked against files it did not make: a scratch folder, one helper per
// dataset, and a closed-form value for every voxel so any read can be checked exactly.
#include <hdf5.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/scratch_folder.hpp"
#include "tessera/parallel/box.hpp"

namespace tessera::testing {

/// The value stored at (sample, d, h, w, c): distinct for every voxel and channel of the small
/// volumes used here, exact in uint8 (mod 251), int16 and float32.
inline double pattern_value(int64_t sample, int64_t d, int64_t h, int64_t w, int64_t c) {
  return static_cast<double>((((sample * 7 + d) * 13 + h) * 11 + w) * 5 + c);
}

/// Per-sample targets: T values of sample `sample`.
inline float target_value(int64_t sample, int64_t t) { return 0.25f * static_cast<float>(sample) - 0.5f * static_cast<float>(t); }

/// Writes `values` as dataset `name` of type `file_type` with `dims`; `memory_type` describes
/// `values`. Throws on any HDF5 failure. Options: chunk dimensions and a deflate level.
inline void write_dataset(hid_t file, const std::string& name, hid_t file_type, hid_t memory_type,
                          const std::vector<hsize_t>& dims, const void* values, const std::vector<hsize_t>& chunk = {},
                          int deflate = 0) {
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
  if (!chunk.empty()) H5Pset_chunk(create, static_cast<int>(chunk.size()), chunk.data());
  if (deflate > 0) H5Pset_deflate(create, static_cast<unsigned>(deflate));
  const hid_t dataset = H5Dcreate2(file, name.c_str(), file_type, space, H5P_DEFAULT, create, H5P_DEFAULT);
  const herr_t status = dataset < 0 ? -1 : H5Dwrite(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
  if (dataset >= 0) H5Dclose(dataset);
  H5Pclose(create);
  H5Sclose(space);
  if (status < 0) throw std::runtime_error("writing dataset " + name + " failed");
}

/// Pattern values for samples [first, first + n) of shape [D, H, W, C], converted to T.
template <class T>
std::vector<T> pattern_samples(int64_t first, int64_t n, int64_t d, int64_t h, int64_t w, int64_t c,
                               double modulus = 0.0) {
  std::vector<T> v;
  v.reserve(static_cast<size_t>(n * d * h * w * c));
  for (int64_t s = first; s < first + n; ++s)
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < h; ++j)
        for (int64_t k = 0; k < w; ++k)
          for (int64_t l = 0; l < c; ++l) {
            double x = pattern_value(s, i, j, k, l);
            if (modulus > 0) x -= modulus * static_cast<double>(static_cast<int64_t>(x / modulus));
            v.push_back(static_cast<T>(x));
          }
  return v;
}

/// Creates `path` (truncating) with HDF5's default file format; throws on failure.
inline hid_t create_file(const std::string& path) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) throw std::runtime_error("cannot create " + path);
  return file;
}

/// A file of `n` samples [n, D, H, W, C] float32 (pattern values, starting at sample `first`)
/// with per-sample targets [n, T] float32 — or, with `voxel_targets`, per-voxel labels
/// [n, D, H, W] float32 (the pattern's channel 0 modulo 3).
inline void write_stacked_file(const std::string& path, int64_t first, int64_t n, int64_t d, int64_t h, int64_t w,
                               int64_t c, int64_t targets, bool voxel_targets = false) {
  const hid_t file = create_file(path);
  const auto inputs = pattern_samples<float>(first, n, d, h, w, c);
  write_dataset(file, "inputs", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT,
                {static_cast<hsize_t>(n), static_cast<hsize_t>(d), static_cast<hsize_t>(h), static_cast<hsize_t>(w),
                 static_cast<hsize_t>(c)},
                inputs.data());
  if (voxel_targets) {
    const auto labels = pattern_samples<float>(first, n, d, h, w, 1, 3.0);
    write_dataset(file, "targets", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT,
                  {static_cast<hsize_t>(n), static_cast<hsize_t>(d), static_cast<hsize_t>(h), static_cast<hsize_t>(w)},
                  labels.data());
  } else {
    std::vector<float> t;
    for (int64_t s = first; s < first + n; ++s)
      for (int64_t k = 0; k < targets; ++k) t.push_back(target_value(s, k));
    write_dataset(file, "targets", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT,
                  {static_cast<hsize_t>(n), static_cast<hsize_t>(targets)}, t.data());
  }
  H5Fclose(file);
}

/// The part `box` of pattern sample `sample` ([D, H, W, C] whole size `c` channels), as floats.
inline std::vector<float> pattern_box(int64_t sample, const parallel::Box& box, int64_t c, double modulus = 0.0) {
  std::vector<float> v;
  for (int64_t i = box.offset[0]; i < box.offset[0] + box.extent[0]; ++i)
    for (int64_t j = box.offset[1]; j < box.offset[1] + box.extent[1]; ++j)
      for (int64_t k = box.offset[2]; k < box.offset[2] + box.extent[2]; ++k)
        for (int64_t l = 0; l < c; ++l) {
          double x = pattern_value(sample, i, j, k, l);
          if (modulus > 0) x -= modulus * static_cast<double>(static_cast<int64_t>(x / modulus));
          v.push_back(static_cast<float>(x));
        }
  return v;
}

}  // namespace tessera::testing
