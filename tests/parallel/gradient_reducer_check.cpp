// Run under mpirun: gradient buckets summed over the ranks while "backprop" goes on.
//  * Every rank's buffer holds integer-valued floats that depend on the rank and the step,
//    so the sum is exact; after finish() every element must equal the formula's sum.
//  * When MPI grants MPI_THREAD_MULTIPLE the reducer must run a progress thread, and buckets
//    started before a long stretch without MPI calls (a convolution's backward pass) must
//    complete during it: in_flight() turns false while this thread only sleeps.
// Exit status 0 on every rank when all holds.
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "support/mpi_program.hpp"
#include "tessera/parallel/gradient_reducer.hpp"

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
  return program.exit_status(failed);
}
