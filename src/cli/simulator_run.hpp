#pragma once
// Runs tessera-sim, the SimGrid replay built beside `tessera` where SimGrid is found
// (docs/simulation.md), on a step schedule, and reads its result.
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/temp_file_registry.hpp"

namespace tessera::cli {

/// A file of this command's own that is removed when it goes out of scope, whatever is thrown,
/// and by the signal handlers (TempFileRegistration) when the process is ended at once.
class ScratchFile {
 public:
  explicit ScratchFile(std::string path) : path_(std::move(path)), registration_(path_) {}
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  TempFileRegistration registration_;
};

/// The path of tessera-sim: beside this program (build tree or install), else on PATH. Throws
/// ConfigError naming `flag` when there is none, saying how to build it.
std::string find_simulator(const std::string& flag);

/// Replays `schedule` on `platform` with `simulator` and returns its JSON result. Throws
/// ConfigError naming `flag` with the simulator's own message when it fails (a platform
/// too small for the ranks, a bad platform file).
nlohmann::json run_simulator(const std::string& simulator, const std::string& schedule, const std::string& platform,
                             const std::string& flag);

}  // namespace tessera::cli
