// OverlapChoice: the warm-up step, the alternating timed trial steps and the decision for the
// faster way, on one rank (the decision's allreduce over a group of one).
#include <catch2/catch.hpp>

#include "tessera/layers/overlap_choice.hpp"

using tessera::layers::OverlapChoice;
using tessera::parallel::Communicator;

namespace {
/// Runs the trial with `overlapped_s` and `first_s` seconds per overlapped / exchange-first
/// step (forward and backward each half) and returns the ways the steps ran.
std::vector<bool> run_trial(OverlapChoice& c, double overlapped_s, double first_s) {
  std::vector<bool> ways;
  for (int step = 0; step <= OverlapChoice::trial_steps; ++step) {
    const bool overlapped = c.start_training_step();
    ways.push_back(overlapped);
    CHECK(c.timing() == (step > 0));
    c.add((overlapped ? overlapped_s : first_s) / 2);  // forward
    c.add((overlapped ? overlapped_s : first_s) / 2);  // backward
    c.finish_training_step(Communicator::self());
  }
  return ways;
}
}  // namespace

TEST_CASE("OverlapChoice alternates after a warm-up step and keeps the faster way", "[layers][halo]") {
  OverlapChoice c;
  c.reset(true, true);
  CHECK(c.overlapped());
  CHECK(c.candidate());
  CHECK(c.verdict() == "to be measured on the first training steps");
  const auto ways = run_trial(c, 0.3, 0.2);
  CHECK(ways == std::vector<bool>{true, false, true, false, true, false, true});
  CHECK_FALSE(c.overlapped());
  CHECK(c.verdict() ==
        "measured: overlapped 0.3000 s, exchange-first 0.2000 s per step (summed over 1 ranks): exchanging first");
  // Decided: later steps run the chosen way, untimed.
  CHECK_FALSE(c.start_training_step());
  CHECK_FALSE(c.timing());

  c.reset(true, true);
  run_trial(c, 0.1, 0.2);
  CHECK(c.overlapped());
  CHECK(c.verdict().find(": overlapping") != std::string::npos);
}

TEST_CASE("OverlapChoice does not measure when ruled out or told not to", "[layers][halo]") {
  OverlapChoice c;
  c.reset(false, true);
  CHECK_FALSE(c.candidate());
  CHECK_FALSE(c.start_training_step());
  CHECK_FALSE(c.timing());
  CHECK(c.verdict().empty());
  c.reset(true, false);
  for (int step = 0; step < 10; ++step) {
    CHECK(c.start_training_step());
    CHECK_FALSE(c.timing());
    c.finish_training_step(Communicator::self());
  }
  CHECK(c.overlapped());
}
