// The backend's options: set by the program, or else read once from the environment, since
// the run configuration has no per-backend section.
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "tessera/backends/cudnn/cudnn_backend.hpp"
#include "tessera/core/error.hpp"

namespace tessera::cudnn_backend {
namespace {

std::mutex& options_mutex() {
  static std::mutex m;
  return m;
}

std::optional<Options>& current() {
  static std::optional<Options> o;
  return o;
}

std::string environment(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

Options from_environment() {
  Options o;
  const std::string tf32 = environment("TESSERA_CUDNN_TF32");
  if (tf32 == "1")
    o.tf32 = true;
  else if (!tf32.empty() && tf32 != "0")
    throw Error("environment variable TESSERA_CUDNN_TF32: expected 0 or 1, got '" + tf32 + "'");
  const std::string algo = environment("TESSERA_CUDNN_ALGO");
  if (algo == "benchmark")
    o.benchmark = true;
  else if (!algo.empty() && algo != "heuristic")
    throw Error("environment variable TESSERA_CUDNN_ALGO: expected heuristic or benchmark, got '" + algo + "'");
  const std::string deterministic = environment("TESSERA_CUDNN_DETERMINISTIC");
  if (deterministic == "0")
    o.deterministic = false;
  else if (!deterministic.empty() && deterministic != "1")
    throw Error("environment variable TESSERA_CUDNN_DETERMINISTIC: expected 1 or 0, got '" + deterministic + "'");
  return o;
}

}  // namespace

Options options() {
  std::lock_guard<std::mutex> lock(options_mutex());
  if (!current()) current() = from_environment();
  return *current();
}

void set_options(const Options& o) {
  std::lock_guard<std::mutex> lock(options_mutex());
  current() = o;
}

}  // namespace tessera::cudnn_backend
