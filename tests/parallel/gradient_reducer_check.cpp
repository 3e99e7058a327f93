// Run under mpirun: gradient buckets summed over the ranks while "backprop" goes on.
//  * Every rank's buffer holds integer-valued floats that depend on the rank and the step,
//    so the sum is exact; after finish() every element must equal the formula's sum.
//  * When MPI grants MPI_THREAD_MULTIPLE the reducer must run a progress thread, and buckets
//    started before a long stretch without MPI calls (a convolution's backward pass) must
//    complete during it: in_flight() turns false while this thread only sleeps.
//  * Sums travelling in bf16 ("gradient_precision"): values rounded to bf16 once, summed
//    exactly where every partial sum is a bf16 value (small integers), unrounded fp32 values
//    within bf16's rounding of the exact sum, the same bits on every rank, and half the bytes
//    counted.
// Exit status 0 on every rank when all holds.
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "support/mpi_program.hpp"
#include "tessera/parallel/gradient_reducer.hpp"
#include "tessera/parallel/traffic_counter.hpp"

using namespace tessera;

namespace {

// Tensors of very different sizes, as in a CNN: a few large (several MiB) and many small.
const std::vector<int64_t> kOffsets{0, 3456, 3488, 58784, 58848, 280032, 280160, 1165024, 1165280, 2934752, 2935008};

float value(int rank, int step, int64_t i) { return static_cast<float>((i * 7 + rank * 13 + step * 3) % 101 - 50); }

bool wait_until_complete(parallel::GradientReducer& reducer) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (reducer.in_flight()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

/// Sums in bf16: exact for small integers (every partial sum of 8 ranks' values in [-15, 15]
/// is a bf16 value), within a rounding per rank for others, equal bits on every rank.
bool check_bf16_sums(const parallel::Communicator& world) {
  const int64_t n = kOffsets.back();
  Tensor grads(Shape{n});
  std::vector<parallel::Communicator> groups(kOffsets.size() - 1, world);
  parallel::GradientReducer reducer(world, grads, kOffsets, 1 << 20, groups, true, ElementType::bf16);
  bool failed = false;
  for (const bool integers : {true, false}) {
    auto mine_of = [&](int rank, int64_t i) {
      const float k = static_cast<float>((i * 7 + rank * 13) % 31 - 15);
      return integers ? k : k + 0.1f * static_cast<float>(rank + 1) / 3.0f;
    };
    std::vector<float> mine(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) mine[static_cast<size_t>(i)] = mine_of(world.rank(), i);
    grads.copy_from_host(mine);
    parallel::TrafficCounter::reset();
    for (size_t t = kOffsets.size() - 1; t-- > 0;) reducer.ready_from(kOffsets[t]);
    reducer.finish();
    const std::vector<float> sum = grads.to_host();
    int64_t wrong = 0;
    const double u = unit_roundoff(ElementType::bf16);
    for (int64_t i = 0; i < n; ++i) {
      double exact = 0, magnitude = 0;
      for (int r = 0; r < world.size(); ++r) {
        exact += mine_of(r, i);
        magnitude += std::abs(mine_of(r, i));
      }
      // Each value rounded once, each of the P − 1 additions (from 3 ranks) rounded once.
      const double bound = integers ? 0.0 : u * magnitude * world.size();
      wrong += std::abs(sum[static_cast<size_t>(i)] - exact) > bound;
    }
    // Every rank must hold the same bits, or the replicas drift apart.
    std::vector<float> first = sum;
    MPI_Bcast(first.data(), static_cast<int>(n), MPI_FLOAT, 0, world.handle());
    const bool same = first == sum;
    const double p = world.size(), expected_bytes = world.is_serial() ? 0.0 : 2.0 * (p - 1.0) / p * 2.0 * n;
    const double counted = parallel::TrafficCounter::bytes(parallel::TrafficCounter::gradients);
    if (wrong > 0 || !same || counted != expected_bytes) {
      std::fprintf(stderr, "rank %d, bf16 sums of %s: %lld of %lld wrong, %s on every rank, %.0f bytes counted (%.0f expected)\n",
                   world.rank(), integers ? "integers" : "fractions", static_cast<long long>(wrong),
                   static_cast<long long>(n), same ? "equal" : "NOT equal", counted, expected_bytes);
      failed = true;
    }
  }
  if (world.rank() == 0 && !failed) std::printf("%d ranks: bf16 sums exact on integers, within rounding otherwise\n", world.size());
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  bool failed = false;
  {
    const int64_t n = kOffsets.back();
    Tensor grads(Shape{n});
    parallel::GradientReducer reducer(world, grads, kOffsets, 1 << 20);  // 4 MiB buckets
    if (parallel::Communicator::thread_multiple() && !reducer.has_progress_thread() && !world.is_serial()) {
      std::fprintf(stderr, "rank %d: MPI_THREAD_MULTIPLE is granted but the reducer has no progress thread\n",
                   world.rank());
      failed = true;
    }
    for (int step = 0; step < 3; ++step) {
      std::vector<float> mine(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) mine[static_cast<size_t>(i)] = value(world.rank(), step, i);
      grads.copy_from_host(mine);
      // Backprop finishes the tensors from the last to the first.
      for (size_t t = kOffsets.size() - 1; t-- > 0;) {
        reducer.ready_from(kOffsets[t]);
        if (t == 5 && reducer.has_progress_thread() && !wait_until_complete(reducer)) {
          std::fprintf(stderr, "rank %d step %d: the started buckets did not complete without MPI calls\n",
                       world.rank(), step);
          failed = true;
        }
      }
      reducer.finish();
      const std::vector<float> sum = grads.to_host();
      int64_t wrong = 0;
      for (int64_t i = 0; i < n; ++i) {
        float expected = 0;
        for (int r = 0; r < world.size(); ++r) expected += value(r, step, i);
        wrong += sum[static_cast<size_t>(i)] != expected;
      }
      if (wrong > 0) {
        std::fprintf(stderr, "rank %d step %d: %lld of %lld summed gradients are wrong\n", world.rank(), step,
                     static_cast<long long>(wrong), static_cast<long long>(n));
        failed = true;
      }
    }
    if (world.rank() == 0)
      std::printf("%d ranks, %zu buckets, progress thread: %s\n", world.size(), reducer.buckets(),
                  reducer.has_progress_thread() ? "yes" : "no");
  }
  failed |= check_bf16_sums(world);
  return program.exit_status(failed);
}
