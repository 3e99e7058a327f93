#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/io/sample_schema.hpp"

namespace tessera::io {

/// Where the samples of an HDF5 data set live (docs/data.md): which files, how many samples
/// each holds, under which dataset names, and what every sample looks like. Samples are
/// numbered through the files in order. Two ways to list the files:
///  * files of many samples each — inputs [N, D, H, W, C], targets [N, ...] — given as paths
///    or glob patterns; every file is opened when the layout is built, to count its samples;
///  * a sample list naming one-sample files — inputs [D, H, W, C], targets [...] — as CosmoFlow
///    ships its data; every listed file must exist and be readable when the layout is built,
///    the first one is opened for the schema, and each other one is checked against it when it
///    is first read (or all at once with `check_all`).
/// Every file must agree with the first on shapes and element types.
class Hdf5Layout {
 public:
  /// Names of the two datasets in every file.
  struct Names {
    std::string inputs = "inputs";
    std::string targets = "targets";
  };
  struct File {
    std::string path;
    int64_t first_sample = 0;  // global index of its first sample
    int64_t samples = 1;
    bool stacked = false;      // samples along a leading dimension
    bool checked = false;      // opened and checked against the schema when the layout was built
  };

  /// The files matching `patterns` (paths or glob patterns, each matching at least one file),
  /// in the order given, each pattern's matches sorted. ConfigError at `where` for a pattern
  /// that matches nothing; IoError naming the file, the dataset and the problem otherwise.
  static Hdf5Layout from_files(const std::vector<std::string>& patterns, const Names& names, const std::string& where);
  /// The files named in the sample list `list` (one path per line, relative to the list's
  /// folder; blank lines and lines starting with '#' are skipped). IoError naming the list,
  /// the line and the file when a listed file is missing or unreadable.
  static Hdf5Layout from_sample_list(const std::string& list, const Names& names, bool check_all);

  int64_t size() const { return samples_; }
  const SampleSchema& schema() const { return schema_; }
  const Names& names() const { return names_; }
  const std::vector<File>& files() const { return files_; }
  /// The file holding sample `index` (an index into files()) and the sample's place in it.
  std::pair<size_t, int64_t> locate(int64_t index) const;
  /// "sample list data/train.txt (1024 files)" or "3 files (data/train_*.h5)"
  const std::string& source() const { return source_; }

 private:
  Hdf5Layout() = default;
  std::vector<File> files_;
  Names names_;
  SampleSchema schema_;
  int64_t samples_ = 0;
  std::string source_;
};

/// Throws IoError naming `path` and the datasets when `found` differs from `expected` (shapes
/// or element types); `reference` is the file `expected` came from.
void require_same_schema(const SampleSchema& expected, const SampleSchema& found, const std::string& path,
                         const std::string& reference, const Hdf5Layout::Names& names);

}  // namespace tessera::io
