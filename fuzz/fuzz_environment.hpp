#pragma once
// What every fuzz target needs around the code it feeds: Kokkos started once per process,
// and a private scratch folder where the input becomes a file (Tessera's readers take paths,
// as the `tessera` command hands them over).
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace tessera::fuzz {

/// The process-wide state of a fuzz target: Kokkos on one thread (inputs are tiny, and one
/// thread keeps runs deterministic under libFuzzer), and a scratch folder removed at exit.
class FuzzEnvironment {
 public:
  /// The environment, set up by the first call.
  static FuzzEnvironment& get() {
    static FuzzEnvironment environment;
    return environment;
  }

  /// The scratch folder (ends without a slash).
  const std::string& folder() const { return folder_; }
  /// `folder()/name`.
  std::string path(const std::string& name) const { return folder_ + "/" + name; }

  /// Writes `size` bytes to `folder()/name`, replacing it; returns its path.
  std::string write(const std::string& name, const uint8_t* data, size_t size) const {
    const std::string p = path(name);
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (!f) throw std::runtime_error("fuzz environment: cannot write " + p);
    const size_t written = size ? std::fwrite(data, 1, size, f) : 0;
    const bool closed = std::fclose(f) == 0;
    if (written != size || !closed) throw std::runtime_error("fuzz environment: cannot write " + p);
    return p;
  }

  ~FuzzEnvironment() {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
    if (Kokkos::is_initialized()) Kokkos::finalize();
  }
  FuzzEnvironment(const FuzzEnvironment&) = delete;
  FuzzEnvironment& operator=(const FuzzEnvironment&) = delete;

 private:
  FuzzEnvironment() {
    if (!Kokkos::is_initialized()) {
      // A second OpenMP runtime (clang's, beside the libgomp Kokkos was built with) would
      // otherwise start its own threads; one thread keeps both idle.
      Kokkos::InitArguments arguments;
      arguments.num_threads = 1;
      arguments.disable_warnings = true;
      Kokkos::initialize(arguments);
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tessera-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("fuzz environment: cannot create " + pattern);
    folder_ = pattern;
  }

  std::string folder_;
};

}  // namespace tessera::fuzz
