// Run under mpirun on 2 or more ranks (on one node or several): MpiHaloTransport's messages
// move while the ranks make no MPI call.
//  * When MPI grants MPI_THREAD_MULTIPLE the transport must have a progress thread, and large
//    messages (rendezvous: nothing flows until the receiver answers, which needs an MPI call
//    on its side) posted before a stretch without MPI calls (an overlapped convolution) must
//    arrive during it: progress() then only reads what the thread saw, so it turns true only
//    if the thread moved them.
//  * The values arrive intact, several exchanges in a row, in both directions.
// Exit status 0 on every rank when all holds.
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "support/mpi_program.hpp"
#include "tessera/parallel/mpi_halo_transport.hpp"

using namespace tessera;

namespace {

constexpr int64_t kValues = 2 << 20;  // 8 MiB per message, far beyond any eager limit
constexpr int64_t kRoom = kValues + parallel::HaloTransport::stamp_floats;

float value(int rank, int round, int64_t i) { return static_cast<float>((i * 5 + rank * 11 + round * 7) % 97); }

bool arrives_without_mpi_calls(parallel::MpiHaloTransport& transport) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!transport.progress()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  const int p = world.size(), me = world.rank();
  const int next = (me + 1) % p, previous = (me + p - 1) % p;
  bool failed = false;
  const auto check = [&](bool ok, const std::string& what) {
    if (ok) return;
    failed = true;
    std::printf("rank %d of %d: FAILED %s\n", me, p, what.c_str());
  };
  {
    parallel::MpiHaloTransport transport(world, kRoom, kRoom, 2);
    check(transport.has_progress_thread() == parallel::Communicator::thread_multiple(),
          "a progress thread exactly when MPI grants MPI_THREAD_MULTIPLE");
    const std::vector<parallel::PackedMessage> to_next{{next, 1, 0, kValues}}, from_previous{{previous, 1, 0, kValues}};
    for (int round = 0; round < 3; ++round) {
      // Even rounds send owned -> halo to the next rank, odd rounds halo -> owned back.
      const bool forward = round % 2 == 0;
      const auto from = forward ? parallel::HaloBuffer::owned : parallel::HaloBuffer::halo;
      const auto into = forward ? parallel::HaloBuffer::halo : parallel::HaloBuffer::owned;
      auto send = Kokkos::create_mirror_view(transport.buffer(from));
      for (int64_t i = 0; i < kValues; ++i) send(i) = value(me, round, i);
      Kokkos::deep_copy(transport.buffer(from), send);
      world.barrier();
      transport.post(into, forward ? from_previous : std::vector<parallel::PackedMessage>{{next, 2, 0, kValues}}, from,
                     forward ? to_next : std::vector<parallel::PackedMessage>{{previous, 2, 0, kValues}});
      if (transport.has_progress_thread())
        check(arrives_without_mpi_calls(transport),
              "round " + std::to_string(round) + ": 8 MiB did not arrive in 20 s while this rank made no MPI call");
      transport.wait_receives();
      transport.wait_sends();
      transport.deliver();
      const int sender = forward ? previous : next;
      auto got = Kokkos::create_mirror_view(transport.buffer(into));
      Kokkos::deep_copy(got, transport.buffer(into));
      int64_t wrong = 0;
      for (int64_t i = 0; i < kValues; ++i) wrong += got(i) != value(sender, round, i);
      check(wrong == 0, "round " + std::to_string(round) + ": " + std::to_string(wrong) + " values differ");
    }
  }
  std::printf("rank %d of %d: mpi halo transport %s (progress thread: %s)\n", me, p, failed ? "FAILED" : "ok",
              parallel::Communicator::thread_multiple() ? "yes" : "no");
  return program.exit_status(failed);
}
