#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/config.hpp"

namespace tessera::bench {

/// What a benchmark result was measured on: the hardware as the OS reports it and the software
/// this build runs with. Results from different machines are told apart by `key()`.
struct MachineDescription {
  std::string hostname;
  std::string cpu_model;         // "model name" of /proc/cpuinfo
  std::vector<std::string> isa;  // the SIMD and FMA extensions among the CPU's flags
  int64_t cores = 0;             // logical CPUs online
  int64_t numa_domains = 0;      // /sys/devices/system/node/node*
  std::string gpu = "none";      // the device and its execution space, "none" on a host-only build
  std::string compiler, tessera_version, kokkos_version, kokkos_kernels_version, onednn_version, cudnn_version, mpi;
  std::string execution_space;  // Kokkos' default
  int64_t threads = 0;          // its concurrency in this run

  /// This process's machine and build.
  static MachineDescription probe();
  nlohmann::json to_json() const;
  /// Reads what to_json wrote; errors name the JSON path of `cfg`.
  static MachineDescription from_json(ConfigObject cfg);
  /// Identifies the hardware: host and CPU model.
  std::string key() const { return hostname + " (" + cpu_model + ")"; }
};

}  // namespace tessera::bench
