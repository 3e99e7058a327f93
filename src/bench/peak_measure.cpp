#include "tessera/bench/peak_measure.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "tessera/core/error.hpp"

// The FMA kernels are compiled for each instruction set with target attributes and chosen at
// run time, so that the build's own -march (often the baseline x86-64) does not cap the peak
// that the vendor libraries, which pick their code at run time too, are compared with. nvcc
// passes host code through its own front end, which does not take these attributes.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
#define TESSERA_BENCH_X86_FMA 1
#include <immintrin.h>
#else
#define TESSERA_BENCH_X86_FMA 0
#endif

namespace tessera::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Independent accumulators: FMA latency (4-5 cycles) × FMA ports (2) needs at least 10 in
// flight for the loop to issue one FMA per port per cycle.
constexpr int kAccumulators = 12;

#if TESSERA_BENCH_X86_FMA
/// The sum of the accumulators' lanes, which keeps a kernel's loop from being optimised away.
__attribute__((target("avx512f"))) float sum_of(__m512 (&acc)[kAccumulators]) {
  for (int k = 1; k < kAccumulators; ++k) acc[0] = _mm512_add_ps(acc[0], acc[k]);
  // Summed through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized in its header.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc[0]);
  float sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

__attribute__((target("avx512f"))) float fma_avx512(int64_t iterations) {
  __m512 acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm512_set1_ps(1.0f + 0.001f * static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  return sum_of(acc);
}

__attribute__((target("avx2,fma"))) float fma_avx2(int64_t iterations) {
  __m256 acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm256_set1_ps(1.0f + 0.001f * static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  for (int k = 1; k < kAccumulators; ++k) acc[0] = _mm256_add_ps(acc[0], acc[k]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc[0]);
  float sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

/// bf16 dot products (vdpbf16ps): each instruction multiplies 32 bf16 pairs and adds them into
/// 16 fp32 lanes, 64 FLOPs, the instruction oneDNN's bf16 kernels run on CPUs without AMX.
__attribute__((target("avx512f,avx512bf16"))) float dot_bf16_avx512(int64_t iterations) {
  __m512 acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm512_set1_ps(0.001f * static_cast<float>(k));
  // Small values: 1e-3 · 1e-3 · 32 per step keeps the sums finite for any iteration count.
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(-1e-3f), _mm512_set1_ps(1e-3f));
  for (int64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm512_dpbf16_ps(acc[k], a, b);
  return sum_of(acc);
}
#endif

/// Any other CPU, and host code compiled through nvcc: 16 lanes per accumulator, which the
/// compiler vectorises for the build's own instruction set. A multiply and an add: std::fma
/// would be a library call where that instruction set has no FMA, and Tessera's builds do not
/// contract the two (-ffp-contract=off where TESSERA_HOST_ARCH targets an FMA), so this is a
/// lower bound where the hardware has an FMA the build leaves unused.
float fma_generic(int64_t iterations) {
  float acc[kAccumulators][16];
  for (int k = 0; k < kAccumulators; ++k)
    for (int l = 0; l < 16; ++l) acc[k][l] = 1.0f + 0.001f * static_cast<float>(k + l);
  for (int64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < kAccumulators; ++k)
      for (int l = 0; l < 16; ++l) acc[k][l] = acc[k][l] * 0.999999f + 1e-7f;
  float sum = 0;
  for (int k = 0; k < kAccumulators; ++k)
    for (int l = 0; l < 16; ++l) sum += acc[k][l];
  return sum;
}

enum class FmaIsa { avx512f, avx2, generic };

FmaIsa fma_isa() {
#if TESSERA_BENCH_X86_FMA
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return FmaIsa::avx512f;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return FmaIsa::avx2;
#endif
  return FmaIsa::generic;
}

/// Runs the kernel; returns single-precision FLOPs done.
/// The result goes to a volatile: the kernels have no side effects, so a result nobody reads
/// would let the compiler drop the call.
double run_fma(FmaIsa isa, int64_t iterations, volatile float* sink) {
  switch (isa) {
#if TESSERA_BENCH_X86_FMA
    case FmaIsa::avx512f:
      *sink = fma_avx512(iterations);
      return 2.0 * 16 * kAccumulators * static_cast<double>(iterations);
    case FmaIsa::avx2: *sink = fma_avx2(iterations); return 2.0 * 8 * kAccumulators * static_cast<double>(iterations);
#endif
    default: *sink = fma_generic(iterations); return 2.0 * 16 * kAccumulators * static_cast<double>(iterations);
  }
}

/// Runs `work(t)` on `threads` threads released together; returns the wall seconds from the
/// release until the last one finished.
///
/// Up to the host execution space's concurrency, the threads are Kokkos' own, one iteration
/// each: the threads Tessera's host kernels run on, bound as they are. Threads started here
/// would inherit the calling thread's binding instead, and that is one CPU when the OpenMP
/// runtime binds its threads (the tessera command asks it to unless told otherwise): every
/// "all-core" figure would then be one core's, measured twice over.
template <class Work>
double run_parallel(int64_t threads, Work&& work) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  if (threads <= Host().concurrency()) {
    Kokkos::fence();
    const auto t0 = Clock::now();
    Kokkos::parallel_for("tessera::bench::peak_threads",
                         Kokkos::RangePolicy<Host, Kokkos::Schedule<Kokkos::Static>>(0, threads),
                         [&](const int64_t t) { work(t); });
    Kokkos::fence();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
  std::atomic<int64_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      work(t);
    });
  while (ready.load() < threads) std::this_thread::yield();
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void check_threads(int64_t threads) {
  if (threads < 1 || threads > 4096)
    throw Error("peak measurement: threads must be in [1, 4096], got " + std::to_string(threads));
}

}  // namespace

std::string fma_kernel_name() {
  switch (fma_isa()) {
    case FmaIsa::avx512f: return "avx512f";
    case FmaIsa::avx2: return "avx2+fma";
    default: return "generic";
  }
}

namespace {

/// Best-of-`repeats` GFLOP/s of `kernel` (iterations, sink -> FLOPs done) on `threads`
/// threads, each running as many iterations as take one thread about `seconds`.
template <class Kernel>
double measure_gflops(int64_t threads, double seconds, int repeats, Kernel&& kernel) {
  check_threads(threads);
  // Calibrate on one thread: iterations that take about `seconds`.
  volatile float sink = 0;
  int64_t iterations = 1 << 12;
  for (;;) {
    const auto t0 = Clock::now();
    kernel(iterations, &sink);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    if (dt > seconds / 4 || iterations > (int64_t{1} << 40)) {
      iterations = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(iterations) * seconds / dt));
      break;
    }
    iterations *= 4;
  }
  std::unique_ptr<volatile float[]> sinks(new volatile float[static_cast<size_t>(threads)]);
  double best = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    std::vector<double> flops(static_cast<size_t>(threads));
    const double dt = run_parallel(threads, [&](int64_t t) {
      flops[static_cast<size_t>(t)] = kernel(iterations, &sinks[static_cast<size_t>(t)]);
    });
    double total = 0;
    for (double f : flops) total += f;
    best = std::max(best, total / dt / 1e9);
  }
  // The sums keep the loops from being optimised away; they are finite by construction.
  for (int64_t t = 0; t < threads; ++t)
    if (!std::isfinite(sinks[t])) throw Error("peak measurement: the kernel produced a value that is not finite");
  return best;
}

}  // namespace

double measure_fma_gflops(int64_t threads, double seconds, int repeats) {
  const FmaIsa isa = fma_isa();
  return measure_gflops(threads, seconds, repeats,
                        [isa](int64_t iterations, volatile float* sink) { return run_fma(isa, iterations, sink); });
}

bool has_bf16_peak() {
#if TESSERA_BENCH_X86_FMA
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

double measure_bf16_gflops(int64_t threads, double seconds, int repeats) {
#if TESSERA_BENCH_X86_FMA
  if (has_bf16_peak())
    return measure_gflops(threads, seconds, repeats, [](int64_t iterations, volatile float* sink) {
      *sink = dot_bf16_avx512(iterations);
      return 64.0 * kAccumulators * static_cast<double>(iterations);
    });
#endif
  (void)threads, (void)seconds, (void)repeats;
  throw Error("peak measurement: this CPU has no bf16 dot-product instruction (AVX512-BF16)");
}

double measure_triad_gbs(int64_t threads, int64_t bytes, int repeats) {
  check_threads(threads);
  const int64_t n = std::max<int64_t>(bytes / 24, 1024 * threads);
  std::unique_ptr<double[]> a(new double[static_cast<size_t>(n)]), b(new double[static_cast<size_t>(n)]),
      c(new double[static_cast<size_t>(n)]);
  auto block = [&](int64_t t) { return std::make_pair(n * t / threads, n * (t + 1) / threads); };
  // First touch by the thread that later streams the block: its pages sit in that thread's
  // NUMA domain.
  run_parallel(threads, [&](int64_t t) {
    const auto [lo, hi] = block(t);
    for (int64_t i = lo; i < hi; ++i) a[i] = 0.0, b[i] = 1.0, c[i] = 2.0;
  });
  const double s = 3.0;
  double best = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const double dt = run_parallel(threads, [&](int64_t t) {
      const auto [lo, hi] = block(t);
      double* __restrict pa = a.get();
      const double* __restrict pb = b.get();
      const double* __restrict pc = c.get();
      for (int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
    });
    best = std::max(best, 24.0 * static_cast<double>(n) / dt / 1e9);
  }
  if (a[n - 1] != 7.0) throw Error("peak measurement: the triad computed a wrong value");
  return best;
}

int64_t host_threads() { return Kokkos::DefaultHostExecutionSpace().concurrency(); }

int peak_measurements() { return (device_build() ? 6 : 4) + (has_bf16_peak() ? 2 : 0); }

PeakFigures measure_peak(const PeakOptions& options, const std::function<void(const std::string&)>& before_each) {
  auto step = [&](const std::string& what) {
    if (before_each) before_each(what);
  };
  PeakFigures p;
  p.fma_kernel = fma_kernel_name();
  p.threads = options.threads;
  p.triad_bytes = options.triad_bytes;
  step("FMA, one core");
  p.fma_gflops_one_core = measure_fma_gflops(1, options.seconds, options.repeats);
  step("FMA, all cores");
  p.fma_gflops_all_cores = measure_fma_gflops(options.threads, options.seconds, options.repeats);
  step("triad, one core");
  p.triad_gbs_one_core = measure_triad_gbs(1, options.triad_bytes, options.repeats);
  step("triad, all cores");
  p.triad_gbs_all_cores = measure_triad_gbs(options.threads, options.triad_bytes, options.repeats);
  if (has_bf16_peak()) {
    step("bf16 dot products, one core");
    p.bf16_gflops_one_core = measure_bf16_gflops(1, options.seconds, options.repeats);
    step("bf16 dot products, all cores");
    p.bf16_gflops_all_cores = measure_bf16_gflops(options.threads, options.seconds, options.repeats);
  }
  if (device_build()) {
    DevicePeak d;
    d.name = device_name();
    d.triad_bytes = options.triad_bytes;
    step("FMA, device");
    d.fma_gflops = measure_device_fma_gflops(options.seconds, options.repeats);
    step("triad, device");
    d.triad_gbs = measure_device_triad_gbs(options.triad_bytes, options.repeats);
    p.device = d;
  }
  return p;
}

nlohmann::json PeakFigures::to_json() const {
  nlohmann::json j = {{"fma_kernel", fma_kernel},
                      {"threads", threads},
                      {"fma_gflops_one_core", fma_gflops_one_core},
                      {"fma_gflops_all_cores", fma_gflops_all_cores},
                      {"triad_gbs_one_core", triad_gbs_one_core},
                      {"triad_gbs_all_cores", triad_gbs_all_cores},
                      {"triad_bytes", triad_bytes}};
  if (bf16_gflops_one_core) j["bf16_gflops_one_core"] = *bf16_gflops_one_core;
  if (bf16_gflops_all_cores) j["bf16_gflops_all_cores"] = *bf16_gflops_all_cores;
  if (device) j["device"] = device->to_json();
  return j;
}

PeakFigures PeakFigures::from_json(ConfigObject cfg) {
  PeakFigures p;
  p.fma_kernel = cfg.string("fma_kernel");
  p.threads = cfg.integer_in("threads", 1, 1 << 20);
  auto positive = [&cfg](const std::string& key) {
    const double v = cfg.number(key);
    if (!(v > 0) || v > 1e12)
      throw ConfigError(cfg.path_of(key), "expected a positive figure, got " + std::to_string(v));
    return v;
  };
  p.fma_gflops_one_core = positive("fma_gflops_one_core");
  p.fma_gflops_all_cores = positive("fma_gflops_all_cores");
  p.triad_gbs_one_core = positive("triad_gbs_one_core");
  p.triad_gbs_all_cores = positive("triad_gbs_all_cores");
  p.triad_bytes = cfg.integer_in("triad_bytes", 0, int64_t{1} << 50);
  // Only a CPU with bf16 dot products has these.
  if (cfg.has("bf16_gflops_one_core")) p.bf16_gflops_one_core = positive("bf16_gflops_one_core");
  if (cfg.has("bf16_gflops_all_cores")) p.bf16_gflops_all_cores = positive("bf16_gflops_all_cores");
  // Only a GPU build writes device figures.
  if (cfg.has("device")) p.device = DevicePeak::from_json(cfg.object("device"));
  if (p.threads < 1) throw ConfigError(cfg.path_of("threads"), "expected at least 1");
  cfg.finish();
  return p;
}

}  // namespace tessera::bench
