#include "tessera/io/hdf5_layout.hpp"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "hdf5_support.hpp"
#include "tessera/core/error.hpp"

namespace tessera::io {
namespace {

std::vector<std::string> expand(const std::string& pattern, const std::string& where) {
  glob_t g{};
  const int status = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> paths;
  if (status == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) paths.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (paths.empty()) {
    const bool wildcard = pattern.find_first_of("*?[") != std::string::npos;
    if (wildcard) throw ConfigError(where, "the pattern '" + pattern + "' matches no file");
    throw IoError(pattern + ": cannot open the data file: it does not exist");
  }
  return paths;  // glob sorts its matches
}

std::string directory_prefix(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

hdf5::FileContents inspect_file(const std::string& path, const Hdf5Layout::Names& names) {
  std::lock_guard<std::mutex> lock(hdf5::library_mutex());
  const hdf5::Handle file = hdf5::open_file(path);
  return hdf5::inspect(file.get(), path, names.inputs, names.targets);
}

}  // namespace

void require_same_schema(const SampleSchema& expected, const SampleSchema& found, const std::string& path,
                         const std::string& reference, const Hdf5Layout::Names& names) {
  if (found.input != expected.input || found.input_type != expected.input_type)
    throw IoError(path + ": dataset '" + names.inputs + "': samples are " + found.input.str() + " " +
                  element_type_name(found.input_type) + " but those of " + reference + " are " +
                  expected.input.str() + " " + element_type_name(expected.input_type) +
                  "; every file of a data set must agree");
  if (found.target != expected.target || found.target_type != expected.target_type)
    throw IoError(path + ": dataset '" + names.targets + "': targets are " + found.target.str() + " " +
                  element_type_name(found.target_type) + " per sample but those of " + reference + " are " +
                  expected.target.str() + " " + element_type_name(expected.target_type) +
                  "; every file of a data set must agree");
}

Hdf5Layout Hdf5Layout::from_files(const std::vector<std::string>& patterns, const Names& names,
                                  const std::string& where) {
  hdf5::initialise();
  if (patterns.empty()) throw ConfigError(where, "lists no files");
  Hdf5Layout layout;
  layout.names_ = names;
  std::set<std::string> seen;
  for (const auto& pattern : patterns)
    for (const auto& path : expand(pattern, where)) {
      if (!seen.insert(path).second)
        throw ConfigError(where, "names the file " + path + " twice; its samples would count twice");
      const auto contents = inspect_file(path, names);
      if (layout.files_.empty())
        layout.schema_ = contents.schema;
      else
        require_same_schema(layout.schema_, contents.schema, path, layout.files_.front().path, names);
      layout.files_.push_back({path, layout.samples_, contents.samples, contents.stacked, true});
      layout.samples_ += contents.samples;
    }
  layout.source_ = std::to_string(layout.files_.size()) + " file(s)";
  std::string list;
  for (size_t i = 0; i < patterns.size(); ++i) list += (i ? ", " : "") + patterns[i];
  layout.source_ += " (" + list + ")";
  return layout;
}

Hdf5Layout Hdf5Layout::from_sample_list(const std::string& list, const Names& names, bool check_all) {
  hdf5::initialise();
  // Checked before opening: opening a FIFO for reading blocks until a writer comes.
  if (const std::string problem = hdf5::file_problem(list); !problem.empty())
    throw IoError(list + ": cannot read the sample list: it " + problem);
  std::ifstream in(list);
  if (!in) throw IoError(list + ": cannot read the sample list: " + std::strerror(errno));
  Hdf5Layout layout;
  layout.names_ = names;
  const std::string folder = directory_prefix(list);
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    const std::string entry = trimmed(line);
    if (entry.empty() || entry[0] == '#') continue;
    const std::string path = entry[0] == '/' ? entry : folder + entry;
    if (const std::string problem = hdf5::file_problem(path); !problem.empty())
      throw IoError(list + ":" + std::to_string(number) + ": sample file " + path + " " + problem);
    layout.files_.push_back({path, layout.samples_, 1, false, false});
    ++layout.samples_;
  }
  if (in.bad()) throw IoError(list + ": reading the sample list failed: " + std::strerror(errno));
  if (layout.files_.empty()) throw IoError(list + ": the sample list names no files");
  for (auto& file : layout.files_) {
    if (file.first_sample > 0 && !check_all) break;
    const auto contents = inspect_file(file.path, names);
    if (contents.samples != 1)
      throw IoError(file.path + ": dataset '" + names.inputs + "': holds " + std::to_string(contents.samples) +
                    " samples, but a sample list names files of one sample each (list files of many samples "
                    "under \"files\")");
    if (file.first_sample == 0)
      layout.schema_ = contents.schema;
    else
      require_same_schema(layout.schema_, contents.schema, file.path, layout.files_.front().path, names);
    file.stacked = contents.stacked;
    file.checked = true;
  }
  layout.source_ = "sample list " + list + " (" + std::to_string(layout.files_.size()) + " files)";
  return layout;
}

std::pair<size_t, int64_t> Hdf5Layout::locate(int64_t index) const {
  if (index < 0 || index >= samples_)
    throw Error("hdf5 data: sample " + std::to_string(index) + " out of range [0, " + std::to_string(samples_) + ")");
  const auto it = std::upper_bound(files_.begin(), files_.end(), index,
                                   [](int64_t i, const File& f) { return i < f.first_sample; });
  const auto file = static_cast<size_t>(std::distance(files_.begin(), it) - 1);
  return {file, index - files_[file].first_sample};
}

}  // namespace tessera::io
