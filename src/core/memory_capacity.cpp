#include "tessera/core/memory_capacity.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "tessera/core/format.hpp"
#include "tessera/core/kokkos_compat.hpp"

namespace tessera {
namespace {

/// A cgroup's limit in bytes, or int64 max where the file is absent or says "max".
int64_t cgroup_limit(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::numeric_limits<int64_t>::max();
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return std::numeric_limits<int64_t>::max();  // unreadable: no limit we can honour
  }
}

/// The smallest of `file`'s limits in the cgroup at `path` under `mount` and in every cgroup
/// above it: a parent's limit binds its children too.
int64_t smallest_limit_on_path(const std::string& mount, std::string path, const char* file) {
  int64_t smallest = std::numeric_limits<int64_t>::max();
  while (true) {
    smallest = std::min(smallest, cgroup_limit(mount + path + (path == "/" ? "" : "/") + file));
    if (path.empty() || path == "/") break;
    const size_t slash = path.find_last_of('/');
    path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  }
  return smallest;
}

MemoryCapacity host_capacity() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  MemoryCapacity c{pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : std::numeric_limits<int64_t>::max(),
                   "physical memory"};
  std::ifstream in("/proc/self/cgroup");
  const std::string membership((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const int64_t limit = cgroup_memory_limit("/sys/fs/cgroup", membership);
  if (limit > 0 && limit < c.bytes) c = {limit, "cgroup limit"};
  return c;
}

}  // namespace

int64_t cgroup_memory_limit(const std::string& root, const std::string& membership) {
  int64_t smallest = std::numeric_limits<int64_t>::max();
  std::istringstream lines(membership);
  std::string line;
  while (std::getline(lines, line)) {
    // "hierarchy-ID:controllers:path"; the path may itself hold colons.
    const size_t first = line.find(':'), second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      // cgroup v2: one hierarchy, at the root or, on hybrid systems, at unified/.
      for (const char* mount : {"", "/unified"})
        smallest = std::min(smallest, smallest_limit_on_path(root + mount, path, "memory.max"));
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      smallest = std::min(smallest, smallest_limit_on_path(root + "/memory", path, "memory.limit_in_bytes"));
    }
  }
  // Without a path (no /proc), the roots as before.
  if (membership.empty()) {
    smallest = std::min(smallest, cgroup_limit(root + "/memory.max"));
    smallest = std::min(smallest, cgroup_limit(root + "/memory/memory.limit_in_bytes"));
  }
  return smallest;
}

MemoryCapacity memory_capacity() {
  if constexpr (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) {
#if defined(KOKKOS_ENABLE_CUDA)
    size_t free_bytes = 0, total_bytes = 0;
    int devices = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && cudaGetDeviceCount(&devices) == cudaSuccess)
      return {static_cast<int64_t>(total_bytes), "GPU memory", devices};
#endif
    return {std::numeric_limits<int64_t>::max(), "device memory (size unknown)"};
  }
  return host_capacity();
}

int64_t MemoryCapacity::per_rank(int ranks_on_node) const {
  const int64_t sharing = devices > 0 ? (ranks_on_node + devices - 1) / devices : ranks_on_node;
  return bytes / std::max<int64_t>(1, sharing);
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  return fixed(bytes, u == 0 ? 0 : 1) + " " + units[u];
}

}  // namespace tessera
