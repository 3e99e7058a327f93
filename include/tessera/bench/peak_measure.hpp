#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/element_type.hpp"
#include "tessera/bench/device_peak.hpp"
#include "tessera/core/config.hpp"

namespace tessera::bench {

/// The machine's measured limits: single-precision FMA throughput and STREAM-triad bandwidth
/// of one core and of all the threads a run uses, and of the device on a GPU build. Rooflines
/// and architectural efficiencies are taken against these, not against data-sheet figures.
struct PeakFigures {
  std::string fma_kernel;  // the instruction set of the FMA kernel that ran ("avx512f", ...)
  int64_t threads = 1;     // host threads of the all-core figures
  double fma_gflops_one_core = 0, fma_gflops_all_cores = 0;
  double triad_gbs_one_core = 0, triad_gbs_all_cores = 0;
  int64_t triad_bytes = 0;           // the three arrays of the triad together
  /// bf16 dot products (AVX512-BF16) accumulated in fp32, where the CPU has them: the limit of
  /// bf16 convolutions on CPUs without AMX (AMX's tile rate is higher and not measured).
  std::optional<double> bf16_gflops_one_core, bf16_gflops_all_cores;
  std::optional<DevicePeak> device;  // measured by a GPU build

  /// The limits of a run: the device's where one was measured (a GPU build runs its ops
  /// there), else one core's for 1 thread and all cores' for more.
  double gflops(int64_t run_threads) const {
    return device ? device->fma_gflops : run_threads <= 1 ? fma_gflops_one_core : fma_gflops_all_cores;
  }
  /// The arithmetic limit of ops computing in `type`: the bf16 dot-product rate for bf16 on a
  /// CPU where it was measured, else gflops().
  double gflops(int64_t run_threads, ElementType type) const {
    if (type == ElementType::bf16 && !device && bf16_gflops_one_core && bf16_gflops_all_cores)
      return run_threads <= 1 ? *bf16_gflops_one_core : *bf16_gflops_all_cores;
    return gflops(run_threads);
  }
  double gbs(int64_t run_threads) const {
    return device ? device->triad_gbs : run_threads <= 1 ? triad_gbs_one_core : triad_gbs_all_cores;
  }
  nlohmann::json to_json() const;
  static PeakFigures from_json(ConfigObject cfg);
};

/// How long and how large the measurements are.
struct PeakOptions {
  int64_t threads = 1;            // the all-core figures' threads
  double seconds = 0.1;           // per FMA timing (each is repeated, the best kept)
  int64_t triad_bytes = 3 << 27;  // well beyond the last-level cache of current CPUs
  int repeats = 5;
};

/// Best-of-`repeats` GFLOP/s of a register-resident FMA loop on `threads` threads, with the
/// widest FMA instruction set this CPU and compiler both have.
double measure_fma_gflops(int64_t threads, double seconds, int repeats);
/// The instruction set measure_fma_gflops uses here.
std::string fma_kernel_name();
/// Whether this CPU has bf16 dot products (AVX512-BF16), and their best-of-`repeats` GFLOP/s
/// (2 per multiply-add) on `threads` threads; throws Error where it has none.
bool has_bf16_peak();
double measure_bf16_gflops(int64_t threads, double seconds, int repeats);
/// Best-of-`repeats` GB/s of a[i] = b[i] + s·c[i] over `bytes` (three double arrays), each
/// thread on the block it first touched; counts 24 bytes per element, as STREAM does.
double measure_triad_gbs(int64_t threads, int64_t bytes, int repeats);
/// The host threads of this process: Kokkos' host execution space's (on a GPU build the
/// default execution space is the device's).
int64_t host_threads();
/// How many measurements measure_peak makes: the four host figures, two more on a CPU with
/// bf16 dot products, two more on a GPU build.
int peak_measurements();
/// All four host figures, and the device's on a GPU build; `before_each`, if given, hears the
/// name of each measurement before it starts ("FMA, one core", ...), for a progress bar.
PeakFigures measure_peak(const PeakOptions& options,
                         const std::function<void(const std::string&)>& before_each = nullptr);

}  // namespace tessera::bench
