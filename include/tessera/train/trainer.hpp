#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/gradient_reducer.hpp"
#include "tessera/io/dataset.hpp"
#include "tessera/layers/loss.hpp"
#include "tessera/model/model.hpp"
#include "tessera/optim/lr_schedule.hpp"
#include "tessera/optim/optimizer.hpp"
#include "tessera/train/checkpoint.hpp"
#include "tessera/train/replica_check.hpp"

namespace tessera::train {

/// The "training" section of a run config, overridable from the command line.
struct TrainingOptions {
  int64_t epochs = 1;
  int64_t batch_size = 8;
  int64_t max_steps = 0;        // stop after this many optimizer steps in all (0: run all epochs)
  uint64_t seed = 0;
  int64_t log_every = 10;       // steps between logged (averaged) losses
  std::string metrics_file;     // JSON-lines log, empty: none
  std::string checkpoint_file;  // written every `checkpoint_every` steps and at the end, empty: none
  int64_t checkpoint_every = 0;
  int64_t allreduce_bucket_kb = 4096;  // gradient bucket size for the overlapped all-reduce
  bool allreduce_progress_thread = true;  // advance the buckets in flight from a thread
  parallel::GradientCombination gradient_combination = parallel::GradientCombination::sum;
  bool check_replicas = check_replicas_by_default();  // compare replicas after every step
  std::string resume_file;      // checkpoint to start from, empty: fresh start
  bool progress = true;
  bool profile = false;

  /// Reads {"epochs", "batch_size", "max_steps", "seed", "log_every", "checkpoint":
  /// {"path", "every_steps"}}.
  static TrainingOptions from_json(ConfigObject& cfg);
};

/// What a run produced, for the caller and for tests.
struct TrainingReport {
  std::vector<double> logged_losses;  // mean training loss of each logging window
  std::vector<double> step_losses;    // every step's training loss
  double validation_loss = -1.0;      // last validation (−1: none)
  double validation_baseline = -1.0;  // loss of predicting the mean target (regression)
  double validation_accuracy = -1.0;  // classification only
  int64_t steps = 0;
  double samples_per_second = 0.0;
  double peak_rss_mb_max_rank = 0.0;  // peak resident memory of the rank that used the most
};

/// Runs epochs of synchronous mini-batch training: shuffle (from seed and epoch), forward,
/// loss, backward, optimizer step; logs, validates each epoch and checkpoints. With several
/// ranks in `group` each rank reads its block of every global mini-batch — its slice of the
/// samples and, under a spatial split, its box of each — as the model's input distribution
/// says, and the gradients are summed over the group before each step, so the result equals
/// one rank training on the whole batch; rank 0 alone prints, logs and writes checkpoints.
class Trainer {
 public:
  Trainer(model::Model& model, layers::Loss& loss, optim::Optimizer& optimizer, io::DataSplit& data,
          const TrainingOptions& options, const nlohmann::json& optimizer_config,
          parallel::Communicator group = parallel::Communicator::world());
  TrainingReport run();

  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  /// The order in which epoch `epoch` visits the training samples (a permutation that depends
  /// only on the seed and the epoch).
  std::vector<int64_t> epoch_order(int64_t epoch) const;

 private:
  struct Validation {
    double loss = 0.0, baseline = -1.0, accuracy = -1.0;
  };
  Validation validate();
  /// This rank's block of `rows` samples' inputs, and of their targets.
  Shape local_input_shape(int64_t rows) const;
  Shape local_target_shape(int64_t rows, const Shape& per_sample) const;
  /// The part of `targets` (read for the input's distribution) the loss compares with
  /// `prediction` (this rank's block under the output's distribution).
  Tensor loss_targets(const Tensor& targets, const Tensor& prediction, int64_t global_rows) const;

  model::Model& model_;
  layers::Loss& loss_;
  optim::Optimizer& optimizer_;
  io::DataSplit& data_;
  TrainingOptions options_;
  parallel::Communicator group_;
  std::unique_ptr<parallel::GradientReducer> reducer_;
  int64_t local_batch_ = 0;   // samples of each global batch this rank reads
  parallel::Box box_;             // the part of each sample it reads
  int64_t sample_parts_ = 1;  // blocks each sample of the model output is split into
  int64_t validation_samples_ = 0;
  std::unique_ptr<optim::LrSchedule> schedule_;
  double lr_factor_ = 1.0;  // linear scaling with the global batch ("optimizer.lr_scaling")
  int64_t steps_per_epoch_ = 0;
  Tensor inputs_, targets_, grad_;
};

/// Peak resident memory of this process in MiB.
double peak_rss_mb();

}  // namespace tessera::train
