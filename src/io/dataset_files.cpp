#include "tessera/io/dataset_files.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/format.hpp"

namespace tessera::io {
namespace {

/// The files of one set ("train" or "validation") of `count` samples starting at `first`.
void plan_set(const DatasetLayout& layout, const std::string& set, int64_t first, int64_t count,
              std::vector<PlannedFile>& files) {
  if (layout.sample_per_file) {
    for (int64_t i = 0; i < count; ++i) {
      const std::string name = format("%s/sample_%06lld.h5", set.c_str(), static_cast<long long>(i));
      files.push_back({layout.output + "/" + name, name, first + i, 1});
    }
    return;
  }
  for (int64_t i = 0, k = 0; i < count; i += layout.samples_per_file, ++k) {
    const std::string name = format("%s_%04lld.h5", set.c_str(), static_cast<long long>(k));
    files.push_back({layout.output + "/" + name, name, first + i, std::min(layout.samples_per_file, count - i)});
  }
}

}  // namespace

DatasetFiles::DatasetFiles(const DatasetLayout& layout) : layout_(layout) {
  plan_set(layout_, "train", 0, layout_.train_samples, all_);
  train_files_ = all_.size();
  plan_set(layout_, "validation", layout_.train_samples, layout_.validation_samples, all_);
}

std::vector<const PlannedFile*> DatasetFiles::of_rank(int rank, int ranks) const {
  std::vector<const PlannedFile*> mine;
  for (size_t i = static_cast<size_t>(rank); i < all_.size(); i += static_cast<size_t>(ranks)) mine.push_back(&all_[i]);
  return mine;
}

void DatasetFiles::create_folders() const {
  // Errors surface in require_writable_location, which names the folder.
  std::error_code ec;
  std::filesystem::create_directories(layout_.output, ec);
  if (layout_.sample_per_file) {
    std::filesystem::create_directories(layout_.output + "/train", ec);
    if (layout_.validation_samples > 0) std::filesystem::create_directories(layout_.output + "/validation", ec);
  }
  require_writable_location(layout_.output + "/train.txt", "the data set");
}

void DatasetFiles::write_lists() const {
  if (!layout_.sample_per_file) return;
  auto write_list = [&](const std::string& name, size_t begin, size_t end) {
    const std::string path = layout_.output + "/" + name;
    write_file_atomically(path, [&](std::FILE* f) {
      for (size_t i = begin; i < end; ++i) {
        const std::string line = all_[i].listed_as + "\n";
        write_all(f, line.data(), line.size(), path);
      }
    });
  };
  write_list("train.txt", 0, train_files_);
  if (all_.size() > train_files_) write_list("validation.txt", train_files_, all_.size());
}

std::string DatasetFiles::data_section() const {
  const std::string& out = layout_.output;
  const bool validation = layout_.validation_samples > 0;
  std::string s = "\"data\": {\"source\": \"hdf5\", ";
  if (layout_.sample_per_file)
    return s + "\"sample_list\": \"" + out + "/train.txt\"" +
           (validation ? ", \"validation\": {\"sample_list\": \"" + out + "/validation.txt\"}" : std::string());
  return s + "\"files\": \"" + out + "/train_*.h5\"" +
         (validation ? ", \"validation\": {\"files\": \"" + out + "/validation_*.h5\"}" : std::string());
}

}  // namespace tessera::io
