#include "tessera/core/log.hpp"

#include <cstdio>

namespace tessera::log {
namespace {
int g_rank = 0;
}

void set_rank(int r) { g_rank = r; }
int rank() { return g_rank; }

void info(const std::string& message) {
  if (g_rank != 0) return;
  std::fprintf(stdout, "%s\n", message.c_str());
  std::fflush(stdout);
}

void warn(const std::string& message) {
  if (g_rank != 0) return;
  std::fprintf(stderr, "tessera: warning: %s\n", message.c_str());
}

void error(const std::string& message) {
  std::fprintf(stderr, "tessera: error (rank %d): %s\n", g_rank, message.c_str());
  std::fflush(stderr);
}

}  // namespace tessera::log
