#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/model/parameter_store.hpp"
#include "tessera/optim/optimizer.hpp"
#include "tessera/parallel/communicator.hpp"

namespace tessera::train {

/// What a trainer hands another in a tournament, as host copies: trainable parameters,
/// buffers (running statistics), the optimizer's state and step count, and its
/// hyper-parameters (values in the order of Optimizer::hyperparameters(), whose keys both
/// sides share because they run one config). A copy installed elsewhere makes that trainer's
/// model and optimizer equal this one's bit for bit.
struct TrainerState {
  std::vector<float> values, buffers, optimizer_state;
  int64_t optimizer_steps = 0;
  std::vector<double> hyperparameters;

  /// The state of this rank's block of the model and its optimizer.
  static TrainerState capture(const model::ParameterStore& params, optim::Optimizer& optimizer);
  /// Overwrites parameters and buffers (what an evaluation of this model needs).
  void install_model(model::ParameterStore& params) const;
  /// Overwrites parameters, buffers, optimizer state, step count and hyper-parameters.
  void install(model::ParameterStore& params, optim::Optimizer& optimizer) const;

  /// Sends this state to rank `partner` of `peers` and returns the partner's (both call it).
  TrainerState exchange(const parallel::Communicator& peers, int partner) const;
  /// One direction: the winner sends, the loser receives (shaped like its own `like`).
  void send(const parallel::Communicator& peers, int to) const;
  static TrainerState receive(const parallel::Communicator& peers, int from, const TrainerState& like);

 private:
  std::vector<float> packed() const;
  static TrainerState unpacked(const std::vector<float>& data, const TrainerState& like);
};

}  // namespace tessera::train
