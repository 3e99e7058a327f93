#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "tessera/bench/peak_measure.hpp"

using namespace tessera::bench;

TEST_CASE("the measured FMA peak is positive and grows with the threads", "[bench]") {
  const std::string kernel = fma_kernel_name();
  CHECK((kernel == "avx512f" || kernel == "avx2+fma" || kernel == "generic"));
  const double one = measure_fma_gflops(1, 0.02, 5);
  CHECK(one > 0.1);
  const int64_t threads = std::min<int64_t>(2, std::max(1u, std::thread::hardware_concurrency()));
  const double all = measure_fma_gflops(threads, 0.02, 5);
  // Best of several tries on a machine others may be using: all threads must do at least
  // about what one does (a broken thread pool or timing would fall well below).
  CHECK(all >= 0.8 * one);
}

TEST_CASE("the measured triad bandwidth is positive on one and all threads", "[bench]") {
  const double one = measure_triad_gbs(1, 24 << 20, 5);
  CHECK(one > 0.1);
  const int64_t threads = std::min<int64_t>(2, std::max(1u, std::thread::hardware_concurrency()));
  // Best of five, as for the FMA peak: a single slow pass must not decide.
  CHECK(measure_triad_gbs(threads, 24 << 20, 5) >= 0.8 * one);
}

TEST_CASE("a thread count out of range is refused", "[bench]") {
  CHECK_THROWS_WITH(measure_fma_gflops(0, 0.01, 1), Catch::Contains("threads must be in [1, 4096]"));
  CHECK_THROWS_WITH(measure_triad_gbs(-1, 1 << 20, 1), Catch::Contains("threads must be in [1, 4096]"));
}
