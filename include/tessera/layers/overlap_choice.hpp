#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "tessera/parallel/communicator.hpp"

namespace tessera::layers {

/// Chooses, by measuring, whether a spatially split layer overlaps its halo exchange with its
/// computation or exchanges first. Overlapping costs extra local work (pieces, copies); it pays
/// only where the messages take longer than that, which depends on the machine (shared memory
/// or network, CPU or GPU), so the layer times both ways on its first training steps: after
/// one warm-up step, `trial_steps` steps alternating exchange-first and overlapped, each timed
/// over its forward and backward pass. The spatial group then sums its ranks' times (one
/// allreduce, so every rank of the group decides alike) and keeps the faster way. Until then,
/// and in inference, the layer overlaps.
class OverlapChoice {
 public:
  static constexpr int trial_steps = 6;

  /// A new choice for a new shape: `candidate` false when overlap is ruled out beforehand
  /// (HaloOverlappedConv::pays_off), `measure` false to overlap without measuring.
  void reset(bool candidate, bool measure);
  /// Whether the training step starting now runs overlapped (inference: use overlapped()).
  bool start_training_step();
  /// Whether to overlap outside training or before start_training_step.
  bool overlapped() const { return state_ != State::exchange_first; }
  /// Whether overlap was a candidate at all (not ruled out at reset).
  bool candidate() const { return state_ != State::ruled_out; }
  /// Whether the current step is timed (a trial step).
  bool timing() const { return timing_; }
  /// Adds seconds of the current step's forward or backward pass to its trial.
  void add(double seconds);
  /// Ends the current training step's backward pass; after the last trial, decides (a
  /// collective over `group`) and returns true.
  bool finish_training_step(const parallel::Communicator& group);
  /// "measured: overlapped 0.2040 s, exchange-first 0.1940 s per step (summed over 2 ranks):
  /// exchanging first"; empty when ruled out or not measured.
  const std::string& verdict() const { return verdict_; }

 private:
  enum class State { ruled_out, unmeasured, trial, overlapped, exchange_first };
  State state_ = State::ruled_out;
  int calls_ = 0;        // training steps started since reset
  bool current_ = true;  // the current step overlaps
  bool timing_ = false;
  std::array<double, 2> seconds_{0.0, 0.0};  // trial time exchanging first, overlapped
  std::string verdict_;
};

}  // namespace tessera::layers
