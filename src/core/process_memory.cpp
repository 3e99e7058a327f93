#include "tessera/core/process_memory.hpp"

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace tessera {

double resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024.0;  // "VmRSS:  123 kB"
  return 0;
}

double peak_resident_bytes() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports KiB
}

}  // namespace tessera
