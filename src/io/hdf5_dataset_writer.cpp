#include "tessera/io/hdf5_dataset_writer.hpp"

#include <vector>

#include "tessera/core/stop_request.hpp"
#include "tessera/io/hdf5_writer.hpp"
#include "tessera/io/write_progress.hpp"

namespace tessera::io {
namespace {

/// Host memory for one sample's inputs or targets: `values` elements of `type`.
std::vector<unsigned char> buffer(int64_t values, ElementType type) {
  return std::vector<unsigned char>(static_cast<size_t>(values * element_size(type)));
}

}  // namespace

Hdf5DatasetWriter::Hdf5DatasetWriter(const DatasetLayout& layout, bool checksum, const parallel::Communicator& comm)
    : files_(layout), checksum_(checksum), comm_(comm) {
  files_.create_folders();
}

int64_t Hdf5DatasetWriter::samples_here() const {
  int64_t samples = 0;
  for (const PlannedFile* file : files_.of_rank(comm_.rank(), comm_.size())) samples += file->samples;
  return samples;
}

void Hdf5DatasetWriter::write(SampleGenerator& generator, bool progress) {
  // Nothing to save half-way: a stop signal ends the process at once, removing the file
  // being written (whole files already in place stay).
  const StopSignalHandlers signals(StopMode::at_once);
  const SampleSchema schema = generator.schema();
  Hdf5SampleWriter::Options options;
  options.stacked = !files_.layout().sample_per_file;
  options.checksum = checksum_;
  // Thousands of one-sample files: one file-system sync at the end instead of one per file.
  options.durable = options.stacked;
  auto inputs = buffer(schema.input.numel(), schema.input_type);
  auto targets = buffer(schema.target.numel(), schema.target_type);
  std::vector<std::vector<unsigned char>> extras;
  SampleBuffers sample{inputs.data(), targets.data(), {}};
  double sample_bytes = static_cast<double>(inputs.size() + targets.size());
  for (const SampleSchema::Extra& e : schema.extras) {
    extras.push_back(buffer(e.shape.numel(), e.type));
    sample.extras.push_back(extras.back().data());
    sample_bytes += static_cast<double>(extras.back().size());
  }
  const std::vector<const void*> written_extras(sample.extras.begin(), sample.extras.end());
  const auto attributes = generator.attributes();
  WriteProgress shown(progress && comm_.rank() == 0, samples_here(), comm_.size());
  int64_t done = 0;
  double bytes = 0.0;
  for (const PlannedFile* file : files_.of_rank(comm_.rank(), comm_.size())) {
    Hdf5SampleWriter writer(file->path, schema, file->samples, options);
    for (int64_t k = 0; k < file->samples; ++k) {
      generator.generate(file->first_index + k, sample);
      writer.write(k, inputs.data(), targets.data(), written_extras);
      bytes += sample_bytes;
      shown.update(++done, bytes);
    }
    for (const auto& [name, value] : attributes) writer.set_attribute(name, value);
    writer.commit();
  }
  if (!options.durable) sync_file_system(files_.layout().output);
  comm_.barrier();  // every file is in place, on disk, before a list names it
  if (comm_.rank() == 0) files_.write_lists();
}

}  // namespace tessera::io
