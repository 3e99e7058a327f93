#pragma once
#include <cstdint>

#include "tessera/io/dataset_files.hpp"
#include "tessera/io/sample_generator.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::io {

/// Writes a data set of docs/data.md from a SampleGenerator: the one write loop of every
/// `tessera datagen` generator. Each rank of `comm` writes its share of the files
/// (DatasetFiles::of_rank), each file atomically (Hdf5SampleWriter); once every rank's files
/// are in place and on disk, rank 0 writes the lists naming them. A stop signal while it
/// writes ends the process at once, removing the file being written, and a generator that
/// throws leaves no part of its file: either way no list names a missing file.
class Hdf5DatasetWriter {
 public:
  /// Creates the output folders and refuses (IoError) one that cannot be written. `checksum`:
  /// each sample a chunk with HDF5's Fletcher-32 checksum.
  Hdf5DatasetWriter(const DatasetLayout& layout, bool checksum, const parallel::Communicator& comm);

  const DatasetFiles& files() const { return files_; }
  /// Samples this rank writes.
  int64_t samples_here() const;
  /// Writes this rank's files with `generator`'s samples, rank 0 showing its progress when
  /// `progress` is set, and returns when the whole data set is in place (collective).
  void write(SampleGenerator& generator, bool progress);

 private:
  DatasetFiles files_;
  bool checksum_;
  parallel::Communicator comm_;
};

}  // namespace tessera::io
