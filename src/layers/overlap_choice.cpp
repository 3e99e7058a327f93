#include "tessera/layers/overlap_choice.hpp"

#include "tessera/core/format.hpp"

namespace tessera::layers {

void OverlapChoice::reset(bool candidate, bool measure) {
  state_ = !candidate ? State::ruled_out : measure ? State::trial : State::unmeasured;
  calls_ = 0;
  current_ = candidate;
  timing_ = false;
  seconds_ = {0.0, 0.0};
  verdict_ = state_ == State::trial ? "to be measured on the first training steps" : "";
}

bool OverlapChoice::start_training_step() {
  if (state_ == State::ruled_out) return current_ = false;
  if (state_ != State::trial) return current_ = overlapped();
  // Step 0 warms up (allocations, backend code generation); then odd steps exchange first,
  // even steps overlap, so both see the same drift of the machine.
  const int call = calls_++;
  timing_ = call >= 1 && call <= trial_steps;
  current_ = !timing_ || call % 2 == 0;
  return current_;
}

void OverlapChoice::add(double seconds) {
  if (timing_) seconds_[current_ ? 1 : 0] += seconds;
}

bool OverlapChoice::finish_training_step(const parallel::Communicator& group) {
  const bool last_trial = timing_ && calls_ == trial_steps + 1;
  timing_ = false;
  if (state_ != State::trial || !last_trial) return false;
  std::array<double, 2> total = seconds_;
  group.allreduce_sum(total.data(), 2);
  const int per_way = trial_steps / 2;
  state_ = total[1] < total[0] ? State::overlapped : State::exchange_first;
  verdict_ = format("measured: overlapped %.4f s, exchange-first %.4f s per step (summed over %d ranks): %s",
                    total[1] / per_way, total[0] / per_way, group.size(),
                    state_ == State::overlapped ? "overlapping" : "exchanging first");
  return true;
}

}  // namespace tessera::layers
