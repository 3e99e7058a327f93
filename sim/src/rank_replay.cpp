#include "rank_replay.hpp"

#include <deque>
#include <memory>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "collective_algorithms.hpp"
#include "messenger.hpp"

namespace tessera::sim {
namespace {

namespace sg4 = simgrid::s4u;

constexpr int kStepChannel = 0, kGradientChannel = 1;

/// The actor that sums a rank's gradient buckets behind its backward pass.
struct GradientSums : std::enable_shared_from_this<GradientSums> {
  std::deque<const Op*> queued;
  sg4::SemaphorePtr waiting = sg4::Semaphore::create(0), finished = sg4::Semaphore::create(0);
  int outstanding = 0;

  void start(int rank, const Platform& platform) {
    // The actor keeps this alive: it is killed only when the last rank ends.
    auto self = shared_from_this();
    sg4::Actor::create("sums-" + std::to_string(rank), sg4::this_actor::get_host(), [self, rank, &platform] {
      Messenger m(rank, kGradientChannel, platform);
      for (;;) {
        self->waiting->acquire();
        const Op* op = self->queued.front();
        self->queued.pop_front();
        allreduce(m, op->group, op->bytes);
        self->finished->release();
      }
    })->daemonize();
  }
};

void run(const Op& op, Messenger& m, std::vector<sg4::CommPtr>& comms) {
  switch (op.kind) {
    case OpKind::compute:
      sg4::this_actor::sleep_for(op.seconds);
      break;
    case OpKind::exchange: {
      std::vector<int> to;
      for (const auto& message : op.sends) to.push_back(message.first);
      m.leave_node(to);
      for (const int peer : op.receives) comms.push_back(m.receive(peer));
      for (const auto& [peer, bytes] : op.sends) comms.push_back(m.send(peer, bytes));
      sg4::this_actor::sleep_for(op.seconds);  // an overlapped layer's interior
      m.wait(comms);
      break;
    }
    case OpKind::allreduce:
      allreduce(m, op.group, op.bytes);
      break;
    case OpKind::allgather:
      allgather(m, op.group, op.bytes);
      break;
    case OpKind::reduce_scatter:
      reduce_scatter(m, op.group, op.bytes);
      break;
    case OpKind::alltoall:
      alltoall(m, op.group, op.bytes);
      break;
    case OpKind::allreduce_start:
    case OpKind::wait_all:
      break;  // the caller's
  }
}

}  // namespace

void replay_rank(const Schedule& schedule, int rank, const Platform& platform, RankRecord& record) {
  const auto& ops = schedule.ops[static_cast<size_t>(rank)];
  record.layer_seconds.assign(schedule.layers.size() + 1, 0.0);
  Messenger m(rank, kStepChannel, platform);
  std::vector<sg4::CommPtr> comms;
  std::shared_ptr<GradientSums> sums;
  for (record.next = 0; record.next < ops.size(); ++record.next) {
    const Op& op = ops[record.next];
    const double start = sg4::Engine::get_clock();
    if (op.kind == OpKind::allreduce_start) {
      if (!sums) {
        sums = std::make_shared<GradientSums>();
        sums->start(rank, platform);
      }
      sums->queued.push_back(&op);
      ++sums->outstanding;
      sums->waiting->release();
    } else if (op.kind == OpKind::wait_all) {
      for (; sums && sums->outstanding > 0; --sums->outstanding) sums->finished->acquire();
    } else {
      run(op, m, comms);
    }
    const double took = sg4::Engine::get_clock() - start;
    record.layer_seconds[static_cast<size_t>(op.layer + 1)] += took;
    record.compute += op.kind == OpKind::compute ? took : op.seconds;  // an overlapped exchange's compute too
  }
  // A schedule that ends with sums in flight: the step ends when they do.
  for (; sums && sums->outstanding > 0; --sums->outstanding) sums->finished->acquire();
  record.finish = sg4::Engine::get_clock();
  record.finished = true;
}

}  // namespace tessera::sim
