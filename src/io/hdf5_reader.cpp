#include "tessera/io/hdf5_reader.hpp"

#include <algorithm>

#include "hdf5_support.hpp"
#include "tessera/core/error.hpp"

namespace tessera::io {

struct Hdf5Reader::OpenFile {
  size_t index = 0;
  bool stacked = false;
  hdf5::Handle file, inputs, targets;
};

Hdf5Reader::Hdf5Reader(std::shared_ptr<const Hdf5Layout> layout, size_t max_open_files)
    : layout_(std::move(layout)), max_open_(std::max<size_t>(1, max_open_files)) {
  hdf5::initialise();
}

Hdf5Reader::~Hdf5Reader() {
  std::lock_guard<std::mutex> lock(hdf5::library_mutex());
  open_.clear();
}

Hdf5Reader::OpenFile& Hdf5Reader::open(size_t file) {
  for (size_t i = 0; i < open_.size(); ++i)
    if (open_[i]->index == file) {
      std::rotate(open_.begin() + static_cast<std::ptrdiff_t>(i), open_.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                  open_.end());
      return *open_.back();
    }
  const auto& entry = layout_->files()[file];
  const auto& names = layout_->names();
  auto opened = std::make_unique<OpenFile>();
  opened->index = file;
  opened->file = hdf5::open_file(entry.path);
  // Checked even when the layout checked it at start: the file may have changed since.
  const auto contents = hdf5::inspect(opened->file.get(), entry.path, names.inputs, names.targets);
  require_same_schema(layout_->schema(), contents.schema, entry.path, layout_->files().front().path, names);
  if (contents.samples != entry.samples)
    throw IoError(entry.path + ": dataset '" + names.inputs + "': holds " + std::to_string(contents.samples) +
                  " samples, but " + std::to_string(entry.samples) +
                  (entry.checked ? " when the data set was opened" : " (a sample list names one-sample files)"));
  opened->stacked = contents.stacked;
  opened->inputs = hdf5::Handle(H5Dopen2(opened->file.get(), names.inputs.c_str(), H5P_DEFAULT));
  opened->targets = hdf5::Handle(H5Dopen2(opened->file.get(), names.targets.c_str(), H5P_DEFAULT));
  if (!opened->inputs.valid() || !opened->targets.valid())
    throw IoError(entry.path + ": cannot open its datasets: " + hdf5::error_text());
  if (open_.size() >= max_open_) open_.erase(open_.begin());
  open_.push_back(std::move(opened));
  return *open_.back();
}

void Hdf5Reader::read(int64_t index, const parallel::Box& box, void* inputs, void* targets) {
  read_inputs(index, box, inputs);
  read_targets(index, box, targets);
}

void Hdf5Reader::read_inputs(int64_t index, const parallel::Box& box, void* inputs) {
  const SampleSchema& schema = layout_->schema();
  schema.check_box(box, "hdf5 data");
  const auto [file, position] = layout_->locate(index);
  std::lock_guard<std::mutex> lock(hdf5::library_mutex());
  OpenFile& f = open(file);
  hdf5::read_sample(f.inputs.get(), f.stacked, position, true, box, schema.input_type, inputs,
                    layout_->files()[file].path, layout_->names().inputs);
}

void Hdf5Reader::read_targets(int64_t index, const parallel::Box& box, void* targets) {
  const SampleSchema& schema = layout_->schema();
  schema.check_box(box, "hdf5 data");
  const auto [file, position] = layout_->locate(index);
  std::lock_guard<std::mutex> lock(hdf5::library_mutex());
  OpenFile& f = open(file);
  hdf5::read_sample(f.targets.get(), f.stacked, position, schema.targets_per_voxel, box, schema.target_type, targets,
                    layout_->files()[file].path, layout_->names().targets);
}

}  // namespace tessera::io
