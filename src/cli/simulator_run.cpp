#include "simulator_run.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tessera/core/error.hpp"

extern char** environ;

namespace tessera::cli {
namespace fs = std::filesystem;

ScratchFile::~ScratchFile() {
  std::error_code ignored;
  fs::remove(path_, ignored);
}

std::string find_simulator(const std::string& flag) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = self.parent_path() / "tessera-sim";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && ::access((fs::path(dir) / "tessera-sim").c_str(), X_OK) == 0)
        return (fs::path(dir) / "tessera-sim").string();
  }
  throw ConfigError(flag,
                    "tessera-sim, the SimGrid replay, is not installed beside this tessera nor on PATH: it is built "
                    "where SimGrid 3.30 or newer is found (Debian: apt-get install libsimgrid-dev, then rebuild; "
                    "CMake option TESSERA_ENABLE_SIMGRID)");
}

nlohmann::json run_simulator(const std::string& simulator, const std::string& schedule, const std::string& platform,
                             const std::string& flag) {
  const ScratchFile result_file(schedule + ".result.json"), log_file(schedule + ".log");
  const std::string &result = result_file.path(), &log = log_file.path();
  std::vector<std::string> words{simulator, schedule, "--platform", platform, "--json", result};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  // Its output goes to a log that is shown when it fails: a child process of an MPI program,
  // spawned (not forked) so that no MPI state is copied into it.
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  pid_t child = 0;
  const int spawned = posix_spawn(&child, simulator.c_str(), &files, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  if (spawned != 0) throw ConfigError(flag, "cannot start " + simulator + ": " + std::strerror(spawned));
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::ifstream log_in(log);
  std::stringstream said;
  said << log_in.rdbuf();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string text = said.str();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    throw ConfigError(flag, "the simulation failed: " + (text.empty() ? std::string("no message") : text));
  }
  std::ifstream in(result);
  nlohmann::json out;
  try {
    out = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(flag, "tessera-sim wrote no readable result: " + std::string(e.what()));
  }
  return out;
}

}  // namespace tessera::cli
