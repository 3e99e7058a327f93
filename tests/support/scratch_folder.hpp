#pragma once
// The one way a test makes a place to write: a fresh folder under TMPDIR (mkdtemp), removed with
// everything in it at scope exit. Every Catch2 test process runs inside one of its own
// (support/test_main.cpp), so that two test cases, or two runs of the suite, never share a
// path; scripts/check_scratch_paths.py fails the suite on a test that names a fixed path in the
// temporary folder instead.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace tessera::testing {

/// A fresh folder `name`.XXXXXX under the temporary directory, removed at scope exit.
class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& name) {
    std::string pattern = (std::filesystem::temp_directory_path() / (name + ".XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  /// Adopts an existing folder (e.g. one made by rank 0 and shared with other ranks).
  ScratchFolder(const std::string& path, bool remove) : path_(path), remove_(remove) {}
  ~ScratchFolder() {
    std::error_code ec;
    if (remove_) std::filesystem::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
  bool remove_ = true;
};

}  // namespace tessera::testing
