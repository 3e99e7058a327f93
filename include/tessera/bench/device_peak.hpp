#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/config.hpp"

namespace tessera::bench {

/// The measured limits of the device a GPU build runs its ops on: single-precision FMA
/// throughput of the whole device and the triad bandwidth of its memory, from Kokkos kernels
/// in the default (device) execution space, so the same source measures any device Kokkos
/// targets. Ops of a device build are judged against these, not against the host's.
struct DevicePeak {
  std::string name;  // the device as its runtime names it ("NVIDIA H100 80GB HBM3")
  double fma_gflops = 0;
  double triad_gbs = 0;
  int64_t triad_bytes = 0;  // the three arrays of the triad together

  nlohmann::json to_json() const;
  static DevicePeak from_json(ConfigObject cfg);
};

/// Whether this build runs its ops on a device: Kokkos' default execution space works in
/// memory other than the host's (a CUDA build).
bool device_build();
/// The device this process runs on, "Kokkos <space>" where the runtime cannot be asked;
/// throws Error on a build without a device.
std::string device_name();
/// Best-of-`repeats` GFLOP/s of a register-resident multiply-add loop on as many device
/// threads as the device keeps resident, each timing about `seconds`; throws Error on a build
/// without a device.
double measure_device_fma_gflops(double seconds, int repeats);
/// Best-of-`repeats` GB/s of a[i] = b[i] + s·c[i] over `bytes` of device memory (three double
/// arrays, 24 bytes per element counted as STREAM does); throws Error on a build without a
/// device.
double measure_device_triad_gbs(int64_t bytes, int repeats);

}  // namespace tessera::bench
