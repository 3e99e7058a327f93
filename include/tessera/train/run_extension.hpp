#pragma once
#include <memory>
#include <string>

#include "tessera/core/config.hpp"
#include "tessera/io/dataset.hpp"
#include "tessera/model/model.hpp"
#include "tessera/train/batch_source.hpp"

namespace tessera::train {

class Trainer;
struct TrainingOptions;

/// What a kind of run adds to a standard TrainingRun: a config section of its own, the
/// datasets it reads its "data" section into, and a training source that replaces the
/// dataset's fixed samples (a flood-filling network's moving field of view). The run calls
/// them in this order while it is assembled.
class RunExtension {
 public:
  virtual ~RunExtension() = default;
  /// The top-level key of the run config this extension reads ("ffn").
  virtual std::string section() const = 0;
  /// Reads the section (null when the config has none; the extension decides whether that is
  /// an error).
  virtual void configure(ConfigObject* section) = 0;
  /// The training and validation sets of the run's "data" section, for `model` (built from the
  /// config's "model" section).
  virtual io::DataSplit make_datasets(ConfigObject& data, const TrainingOptions& options,
                                      const model::Model& model) = 0;
  /// The source of the trainer's training batches (null: the training set's samples).
  virtual std::unique_ptr<BatchSource> training_source(Trainer& trainer) = 0;
};

}  // namespace tessera::train
