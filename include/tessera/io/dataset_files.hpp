#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::io {

/// Where and how a generated data set is stored (docs/data.md): a training set of
/// `train_samples` samples, then a disjoint validation set, either one file per sample named
/// by the lists train.txt / validation.txt (CosmoFlow's layout) or files of
/// `samples_per_file` samples each (train_NNNN.h5, validation_NNNN.h5).
struct DatasetLayout {
  std::string output;  // the folder
  int64_t train_samples = 0, validation_samples = 0;
  bool sample_per_file = true;
  int64_t samples_per_file = 64;  // without sample_per_file
};

/// One file to write: which samples (the generator's indices, training ones first) go in it.
struct PlannedFile {
  std::string path, listed_as;  // listed_as: the path relative to the output folder
  int64_t first_index = 0, samples = 1;
};

/// The files of a data set: every file of the training set, then of the validation set.
class DatasetFiles {
 public:
  explicit DatasetFiles(const DatasetLayout& layout);

  const DatasetLayout& layout() const { return layout_; }
  /// Every file, training ones first.
  const std::vector<PlannedFile>& all() const { return all_; }
  /// The files rank `rank` of `ranks` writes: every ranks-th, from its own rank on. Samples
  /// depend only on their index, so the files do not depend on the number of ranks.
  std::vector<const PlannedFile*> of_rank(int rank, int ranks) const;
  /// Creates the output folder (and with one file per sample its train/ and validation/),
  /// and throws IoError unless it can be written, before any sample is made.
  void create_folders() const;
  /// With one file per sample, writes the lists naming them (train.txt, validation.txt),
  /// each atomically. Called once every file is in place and on disk, so a list never names
  /// a missing file.
  void write_lists() const;
  /// The start of the "data" section of a run config that reads the files: its source and
  /// files, without the closing brace.
  std::string data_section() const;

 private:
  DatasetLayout layout_;
  size_t train_files_ = 0;
  std::vector<PlannedFile> all_;
};

}  // namespace tessera::io
