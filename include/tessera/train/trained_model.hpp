#pragma once
// A model of a run config with the parameters a checkpoint of its training holds, for
// inference (`tessera predict`, `tessera ffn segment`).
#include <array>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/model/model.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::train {

/// The config's "model" on this rank alone (its "distribution" is dropped: inference here runs
/// on one rank), optionally at another input size (`input_size`, D, H, W: a fully
/// convolutional model runs on volumes of any size its pooling divides), with the checkpoint's
/// parameters and buffers; an empty `checkpoint` leaves the parameters the config's
/// training seed initialises (an untrained baseline). The config's "optimizer" is rebuilt only to read the checkpoint,
/// which stores its state. Throws ConfigError / IoError / Error naming the config key, the
/// file or the first tensor that does not match.
class TrainedModel {
 public:
  TrainedModel(const nlohmann::json& config, const std::string& checkpoint, const std::string& backend,
               const std::optional<std::array<int64_t, 3>>& input_size = std::nullopt);
  ~TrainedModel();
  model::Model& model() { return *model_; }
  /// The optimizer the config names, holding the checkpoint's state (for saving it again).
  optim::Optimizer& optimizer() { return *optimizer_; }
  /// Steps the checkpoint's run had trained.
  int64_t trained_steps() const { return steps_; }
  /// The config's training seed (0 when it names none), which initialised the parameters.
  uint64_t seed() const { return seed_; }

 private:
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  int64_t steps_ = 0;
  uint64_t seed_ = 0;
};

}  // namespace tessera::train
