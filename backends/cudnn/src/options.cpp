// The backend's options: defaults until the program sets them (registry::apply_cudnn_settings,
// from the run config's "cudnn" section, "precision": "tf32" and the command line's flags).
#include <mutex>
#include <string>

#include "tessera/backends/cudnn/cudnn_backend.hpp"

namespace tessera::cudnn_backend {
namespace {

std::mutex& options_mutex() {
  static std::mutex m;
  return m;
}

Options& current() {
  static Options o;
  return o;
}

}  // namespace

Options options() {
  std::lock_guard<std::mutex> lock(options_mutex());
  return current();
}

void set_options(const Options& o) {
  std::lock_guard<std::mutex> lock(options_mutex());
  current() = o;
}

}  // namespace tessera::cudnn_backend
