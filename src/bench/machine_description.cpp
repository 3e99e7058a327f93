#include "tessera/bench/machine_description.hpp"

#include <mpi.h>
#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>
#include <type_traits>

#include "tessera/bench/device_peak.hpp"
#include "tessera/build_info.hpp"
#include "tessera/core/error.hpp"
#if TESSERA_ENABLE_ONEDNN
#include "tessera/backends/onednn/onednn_backend.hpp"
#endif
#if TESSERA_ENABLE_CUDNN
#include "tessera/backends/cudnn/cudnn_backend.hpp"
#endif

namespace tessera::bench {
namespace {

/// The value of the first "key : value" line of /proc/cpuinfo whose key is `key`, or "".
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    k.erase(k.find_last_not_of(" \t") + 1);
    if (k != key) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

std::vector<std::string> simd_flags() {
  // x86 ("flags") and Arm ("Features"); only the extensions that decide the FMA and vector width.
  static const char* wanted[] = {"sse2",     "sse4_2",      "avx",      "avx2",  "fma", "avx512f", "avx512bw",
                                 "avx512vl", "avx512_bf16", "amx_tile", "asimd", "sve", "sve2"};
  std::string flags = cpuinfo_field("flags");
  if (flags.empty()) flags = cpuinfo_field("Features");
  std::istringstream s(flags);
  std::vector<std::string> have, found;
  for (std::string f; s >> f;) have.push_back(f);
  for (const char* w : wanted)
    if (std::find(have.begin(), have.end(), w) != have.end()) found.emplace_back(w);
  return found;
}

int64_t count_numa_domains() {
  DIR* dir = ::opendir("/sys/devices/system/node");
  if (dir == nullptr) return 1;  // no NUMA information: one domain
  int64_t n = 0;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.size() > 4 && name.compare(0, 4, "node") == 0 &&
        name.find_first_not_of("0123456789", 4) == std::string::npos)
      ++n;
  }
  ::closedir(dir);
  return n > 0 ? n : 1;
}

std::string kokkos_version_string() {
  return std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string((KOKKOS_VERSION / 100) % 100) + "." +
         std::to_string(KOKKOS_VERSION % 100);
}

/// A count that must be present and at least 1.
int64_t required_count(ConfigObject& cfg, const std::string& key) {
  return cfg.integer_in(key, 1, int64_t{1} << 30);
}

}  // namespace

MachineDescription MachineDescription::probe() {
  MachineDescription m;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  m.cpu_model = cpuinfo_field("model name");
  if (m.cpu_model.empty()) m.cpu_model = "unknown CPU";
  m.isa = simd_flags();
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cores = online > 0 ? online : static_cast<int64_t>(std::thread::hardware_concurrency());
  m.numa_domains = count_numa_domains();
  using Space = Kokkos::DefaultExecutionSpace;
  m.execution_space = Space::name();
  const bool host_space = std::is_same<Space::memory_space, Kokkos::HostSpace>::value;
  m.gpu = host_space ? "none" : device_name() + " (Kokkos " + m.execution_space + ")";
  m.threads = Space().concurrency();
  m.compiler = TESSERA_CXX_COMPILER;
  m.tessera_version = TESSERA_VERSION;
  m.kokkos_version = kokkos_version_string();
  m.kokkos_kernels_version = TESSERA_KOKKOSKERNELS_VERSION;
#if TESSERA_ENABLE_ONEDNN
  m.onednn_version = onednn_backend::version_string();
#else
  m.onednn_version = "not compiled in";
#endif
#if TESSERA_ENABLE_CUDNN
  m.cudnn_version = cudnn_backend::version_string();
#else
  m.cudnn_version = "not compiled in";
#endif
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(mpi_version, &length);
  m.mpi = std::string(mpi_version, static_cast<size_t>(length));
  m.mpi = m.mpi.substr(0, m.mpi.find_first_of("\n,"));
  return m;
}

nlohmann::json MachineDescription::to_json() const {
  return {{"hostname", hostname},
          {"cpu_model", cpu_model},
          {"isa", isa},
          {"cores", cores},
          {"numa_domains", numa_domains},
          {"gpu", gpu},
          {"compiler", compiler},
          {"tessera_version", tessera_version},
          {"kokkos_version", kokkos_version},
          {"kokkos_kernels_version", kokkos_kernels_version},
          {"onednn_version", onednn_version},
          {"cudnn_version", cudnn_version},
          {"mpi", mpi},
          {"execution_space", execution_space},
          {"threads", threads}};
}

MachineDescription MachineDescription::from_json(ConfigObject cfg) {
  MachineDescription m;
  m.hostname = cfg.string("hostname");
  m.cpu_model = cfg.string("cpu_model");
  m.isa = cfg.string_list("isa", {});
  m.cores = required_count(cfg, "cores");
  m.numa_domains = required_count(cfg, "numa_domains");
  m.gpu = cfg.string("gpu");
  m.compiler = cfg.string("compiler");
  m.tessera_version = cfg.string("tessera_version");
  m.kokkos_version = cfg.string("kokkos_version");
  m.kokkos_kernels_version = cfg.string("kokkos_kernels_version");
  m.onednn_version = cfg.string("onednn_version");
  m.cudnn_version = cfg.string("cudnn_version");
  m.mpi = cfg.string("mpi");
  m.execution_space = cfg.string("execution_space");
  m.threads = required_count(cfg, "threads");
  cfg.finish();
  return m;
}

}  // namespace tessera::bench
