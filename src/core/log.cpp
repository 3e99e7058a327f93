#include "tessera/core/log.hpp"

#include <cstdio>

namespace tessera::log {
namespace {
int g_rank = 0;
bool g_open_line = false;
}  // namespace

void end_open_line() {
  if (!g_open_line) return;
  std::fputc('\n', stdout);
  std::fflush(stdout);
  g_open_line = false;
}

void set_rank(int r) { g_rank = r; }
void set_open_line(bool open) { g_open_line = open; }
int rank() { return g_rank; }

void info(const std::string& message) {
  if (g_rank != 0) return;
  end_open_line();
  std::fprintf(stdout, "%s\n", message.c_str());
  std::fflush(stdout);
}

void warn(const std::string& message) {
  if (g_rank != 0) return;
  end_open_line();
  std::fprintf(stderr, "tessera: warning: %s\n", message.c_str());
}

void error(const std::string& message) {
  end_open_line();
  std::fprintf(stderr, "tessera: error (rank %d): %s\n", g_rank, message.c_str());
  std::fflush(stderr);
}

}  // namespace tessera::log
