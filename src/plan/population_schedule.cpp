#include "tessera/plan/population_schedule.hpp"

#include <algorithm>
#include <numeric>
#include <ostream>
#include <random>

#include "tessera/core/error.hpp"

namespace tessera::plan {
namespace {

/// `op` of a trainer whose ranks start at `base`: its peers and groups moved there.
ScheduleOp shifted(ScheduleOp op, int base) {
  for (auto& send : op.sends) send.first += base;
  for (int& peer : op.receives) peer += base;
  op.group.first += base;
  return op;
}

ScheduleOp swap_with(int peer, double bytes) {
  ScheduleOp x;
  x.kind = ScheduleOp::Kind::exchange;
  x.sends.emplace_back(peer, bytes);
  x.receives.push_back(peer);
  return x;
}

}  // namespace

PopulationSchedule::PopulationSchedule(const StepSchedule& trainer, int trainers, int64_t round_steps,
                                       double tournament_batches, bool tournaments, unsigned seed)
    : trainer_(trainer), trainers_(trainers), round_steps_(round_steps), tournament_batches_(tournament_batches) {
  if (trainers < 1 || round_steps < 1 || tournament_batches < 0)
    throw Error("internal: a population schedule needs trainers and round steps of at least 1");
  std::vector<int> order(static_cast<size_t>(trainers));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 draw(seed);
  std::shuffle(order.begin(), order.end(), draw);
  partner_.assign(static_cast<size_t>(trainers), -1);
  for (size_t k = 0; tournaments && k + 1 < order.size(); k += 2) {
    partner_[static_cast<size_t>(order[k])] = order[k + 1];
    partner_[static_cast<size_t>(order[k + 1])] = order[k];
  }
}

std::vector<ScheduleOp> PopulationSchedule::rank_ops(int rank) const {
  if (rank < 0 || rank >= ranks()) throw Error("internal: rank " + std::to_string(rank) + " outside the population");
  const int n = trainer_.ranks(), t = rank / n, local = rank % n, base = t * n;
  const std::vector<ScheduleOp> step = trainer_.rank_ops(local);
  std::vector<ScheduleOp> ops;
  ops.reserve(step.size() * static_cast<size_t>(round_steps_) + 3);
  for (int64_t s = 0; s < round_steps_; ++s)
    for (const ScheduleOp& op : step) ops.push_back(shifted(op, base));
  const int other = partner_[static_cast<size_t>(t)];
  if (other < 0) return ops;
  const int peer = other * n + local;
  ScheduleOp evaluate;
  evaluate.seconds = 2 * trainer_.forward_seconds() * tournament_batches_;  // both models on its data
  ops.push_back(evaluate);
  ops.push_back(swap_with(peer, 2 * sizeof(double)));  // the two scores
  ops.push_back(swap_with(peer, trainer_.state_bytes()));
  return ops;
}

void PopulationSchedule::write(std::ostream& out) const {
  ScheduleHeader h = trainer_.header();
  h.ranks = ranks();
  h.predicted_seconds *= static_cast<double>(round_steps_);
  h.label = std::to_string(trainers_) + " trainers, a round of " + std::to_string(round_steps_) + " steps: " + h.label;
  write_schedule(out, h, [this](int r) { return rank_ops(r); });
}

}  // namespace tessera::plan
