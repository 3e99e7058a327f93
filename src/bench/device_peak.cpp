#include "tessera/bench/device_peak.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <type_traits>

#include "tessera/core/error.hpp"

namespace tessera::bench {
namespace {

using Device = Kokkos::DefaultExecutionSpace;
using Clock = std::chrono::steady_clock;
constexpr bool kDeviceBuild = !std::is_same<Device::memory_space, Kokkos::HostSpace>::value;

// Independent chains per thread: with many threads resident per core a GPU hides the FMA
// latency across threads, and a few chains more let each thread issue back to back.
constexpr int kChains = 8;

void require_device() {
  if (!kDeviceBuild)
    throw Error(std::string("this build has no device: Kokkos' default execution space is ") + Device::name() +
                " on the host, so there is no device peak to measure (the cuda preset builds one)");
}

/// Seconds of one launch in which `threads` threads each run `iterations` rounds of kChains
/// multiply-adds. `a` and `b` come at run time so that the compiler cannot fold the loop;
/// each thread's sum goes to `sink` so that it cannot drop it.
double fma_launch(int64_t threads, int64_t iterations, float a, float b, const Kokkos::View<float*, Device>& sink) {
  Kokkos::fence();
  const auto t0 = Clock::now();
  Kokkos::parallel_for(
      "tessera::bench::device_fma", Kokkos::RangePolicy<Device>(0, threads), KOKKOS_LAMBDA(const int64_t i) {
        float acc[kChains];
        for (int k = 0; k < kChains; ++k)
          acc[k] = 1.0f + 1e-3f * static_cast<float>(k) + 1e-6f * static_cast<float>(i & 1023);
        for (int64_t r = 0; r < iterations; ++r)
          for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * a + b;  // one FMA where the device has one
        float sum = 0;
        for (int k = 0; k < kChains; ++k) sum += acc[k];
        sink(i) = sum;
      });
  Kokkos::fence();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

nlohmann::json DevicePeak::to_json() const {
  return {{"name", name}, {"fma_gflops", fma_gflops}, {"triad_gbs", triad_gbs}, {"triad_bytes", triad_bytes}};
}

DevicePeak DevicePeak::from_json(ConfigObject cfg) {
  DevicePeak d;
  d.name = cfg.string("name");
  auto positive = [&cfg](const std::string& key) {
    const double v = cfg.number(key);
    if (!(v > 0) || v > 1e12)
      throw ConfigError(cfg.path_of(key), "expected a positive figure, got " + std::to_string(v));
    return v;
  };
  d.fma_gflops = positive("fma_gflops");
  d.triad_gbs = positive("triad_gbs");
  d.triad_bytes = cfg.integer_in("triad_bytes", 0, int64_t{1} << 50);
  cfg.finish();
  return d;
}

bool device_build() { return kDeviceBuild; }

std::string device_name() {
  require_device();
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<Device, Kokkos::Cuda>::value) return Kokkos::Cuda().cuda_device_prop().name;
#endif
  return std::string("Kokkos ") + Device::name();
}

double measure_device_fma_gflops(double seconds, int repeats) {
  require_device();
  // Several waves of the threads the device keeps resident, so that no core idles at the tail.
  const int64_t threads = std::max<int64_t>(4 * static_cast<int64_t>(Device().concurrency()), 1024);
  Kokkos::View<float*, Device> sink("tessera::bench::device_fma_sink", threads);
  const float a = 0.999999f, b = 1e-7f;
  int64_t iterations = 64;
  for (;;) {
    const double dt = fma_launch(threads, iterations, a, b, sink);
    if (dt > seconds / 4 || iterations > (int64_t{1} << 40)) {
      iterations = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(iterations) * seconds / dt));
      break;
    }
    iterations *= 4;
  }
  double best = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const double dt = fma_launch(threads, iterations, a, b, sink);
    best = std::max(best, 2.0 * kChains * static_cast<double>(iterations) * static_cast<double>(threads) / dt / 1e9);
  }
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sink);
  for (int64_t i = 0; i < threads; ++i)
    if (!std::isfinite(host(i))) throw Error("device peak: the FMA kernel produced a value that is not finite");
  return best;
}

double measure_device_triad_gbs(int64_t bytes, int repeats) {
  require_device();
  const int64_t n = std::max<int64_t>(bytes / 24, 1 << 20);
  Kokkos::View<double*, Device> a("tessera::bench::triad_a", n), b("tessera::bench::triad_b", n),
      c("tessera::bench::triad_c", n);
  Kokkos::parallel_for(
      "tessera::bench::device_triad_init", Kokkos::RangePolicy<Device>(0, n), KOKKOS_LAMBDA(const int64_t i) {
        a(i) = 0.0;
        b(i) = 1.0;
        c(i) = 2.0;
      });
  const double s = 3.0;
  double best = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    Kokkos::fence();
    const auto t0 = Clock::now();
    Kokkos::parallel_for(
        "tessera::bench::device_triad", Kokkos::RangePolicy<Device>(0, n),
        KOKKOS_LAMBDA(const int64_t i) { a(i) = b(i) + s * c(i); });
    Kokkos::fence();
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 24.0 * static_cast<double>(n) / dt / 1e9);
  }
  double last = 0;
  Kokkos::deep_copy(last, Kokkos::subview(a, n - 1));
  if (last != 7.0) throw Error("device peak: the triad computed a wrong value");
  return best;
}

}  // namespace tessera::bench
