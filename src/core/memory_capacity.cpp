#include "tessera/core/memory_capacity.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>

#include "tessera/core/format.hpp"
#include "tessera/core/kokkos_compat.hpp"

namespace tessera {
namespace {

/// A cgroup's limit in bytes, or int64 max where the file is absent or says "max".
int64_t cgroup_limit(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::numeric_limits<int64_t>::max();
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return std::numeric_limits<int64_t>::max();  // unreadable: no limit we can honour
  }
}

MemoryCapacity host_capacity() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  MemoryCapacity c{pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : std::numeric_limits<int64_t>::max(),
                   "physical memory"};
  // cgroup v2, then v1 (v1 writes a huge number when there is no limit).
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const int64_t limit = cgroup_limit(path);
    if (limit > 0 && limit < c.bytes) c = {limit, "cgroup limit"};
  }
  return c;
}

}  // namespace

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
