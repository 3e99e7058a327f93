#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/temp_file_registry.hpp"
#include "tessera/io/sample_schema.hpp"

namespace tessera::io {

/// Writes one data file of docs/data.md, atomically: the datasets are written to a temporary
/// file beside `path`, which commit() closes, fsyncs and renames over `path` (then fsyncs the
/// folder); a writer destroyed without commit() removes it. A crash or an error therefore
/// leaves the old file or none, never a half-written one. Files use HDF5's 1.8 format, whose
/// metadata carries checksums, so a damaged header is refused when read.
class Hdf5SampleWriter {
 public:
  struct Options {
    std::string input_dataset = "inputs";
    std::string target_dataset = "targets";
    /// Samples along a leading dimension (inputs [N, D, H, W, C]); false writes one sample
    /// as [D, H, W, C] (CosmoFlow's layout; `samples` must be 1).
    bool stacked = true;
    /// One chunk per sample with HDF5's Fletcher-32 checksum, so damaged sample data is
    /// refused when read (contiguous storage, the default, is read faster but unchecked).
    bool checksum = false;
    /// fsync the file before it is renamed into place. Writers of many small files may turn
    /// it off and sync the file system once at the end (sync_file_system()), before anything
    /// names the files: each file still appears whole or not at all to readers, and after a
    /// power cut before that sync, files may be empty but the list naming them is missing.
    bool durable = true;
  };

  Hdf5SampleWriter(const std::string& path, const SampleSchema& schema, int64_t samples, const Options& options);
  ~Hdf5SampleWriter();
  Hdf5SampleWriter(const Hdf5SampleWriter&) = delete;
  Hdf5SampleWriter& operator=(const Hdf5SampleWriter&) = delete;

  /// Writes sample `index` (< samples): its whole inputs and targets, and the schema's extras
  /// in its order (each to a dataset of its name), in the schema's element types and shapes.
  void write(int64_t index, const void* inputs, const void* targets, const std::vector<const void*>& extras = {});
  /// A string attribute on the file's root group, e.g. what generated it.
  void set_attribute(const std::string& name, const std::string& value);
  /// Finishes the file and moves it into place. IoError naming the file when that fails.
  void commit();

 private:
  struct Handles;
  std::string path_, temporary_;
  TempFileRegistration registration_{temporary_};  // removed by a process ended at once
  SampleSchema schema_;
  int64_t samples_;
  Options options_;
  std::unique_ptr<Handles> handles_;
  bool committed_ = false;
};

/// Flushes the file system holding `folder` to disk (syncfs); IoError naming it on failure.
void sync_file_system(const std::string& folder);

}  // namespace tessera::io
