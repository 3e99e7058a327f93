#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/checked_number.hpp"
#include "tessera/core/element_type.hpp"
#include "tessera/io/dataset.hpp"
#include "tessera/layers/loss.hpp"
#include "tessera/model/model.hpp"
#include "tessera/optim/lr_schedule.hpp"
#include "tessera/optim/optimizer.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/gradient_reducer.hpp"
#include "tessera/parallel/lagged_agreement.hpp"
#include "tessera/train/batch_domain_check.hpp"
#include "tessera/train/batch_plan.hpp"
#include "tessera/train/batch_source.hpp"
#include "tessera/train/checkpoint.hpp"
#include "tessera/train/metrics_log.hpp"
#include "tessera/train/loss_scaler.hpp"
#include "tessera/train/progress.hpp"
#include "tessera/train/replica_check.hpp"
#include "tessera/train/share_balancer.hpp"
#include "tessera/train/trainer_hook.hpp"
#include "tessera/train/validation_metrics.hpp"

namespace tessera::train {

/// The bounds of the "training" section's counts, shared by the config keys and the flags that
/// override them: each product a run derives from them (batch × accumulate samples a step,
/// epochs × steps) fits in 64 bits, and the product with the data set's size is checked.
struct TrainingLimits {
  static constexpr IntegerBounds epochs{1, int64_t{1} << 30};
  static constexpr IntegerBounds batch_size{1, int64_t{1} << 30};
  static constexpr IntegerBounds accumulate{1, int64_t{1} << 20};
  static constexpr IntegerBounds max_steps{0, int64_t{1} << 50};
  static constexpr IntegerBounds checkpoint_every{0, int64_t{1} << 50};
  static constexpr IntegerBounds seed{0, int64_t{1} << 62};
};

/// The "training" section of a run config, overridable from the command line.
struct TrainingOptions {
  int64_t epochs = 1;
  int64_t batch_size = 8;  // the global micro-batch: samples per forward and backward pass over all ranks
  /// Micro-batches whose gradients are summed before each optimizer step (gradient
  /// accumulation): a step sees batch_size·accumulate samples, reduced over the ranks once.
  int64_t accumulate = 1;
  int64_t max_steps = 0;  // stop after this many optimizer steps in all (0: run all epochs)
  uint64_t seed = 0;
  int64_t log_every = 10;       // steps between logged (averaged) losses
  std::string metrics_file;     // JSON-lines log, empty: none
  std::string checkpoint_file;  // written every `checkpoint_every` steps and at the end, empty: none
  int64_t checkpoint_every = 0;
  int64_t allreduce_bucket_kb = 4096;     // gradient bucket size for the overlapped all-reduce
  bool allreduce_progress_thread = true;  // advance the buckets in flight from a thread
  parallel::GradientCombination gradient_combination = parallel::GradientCombination::sum;
  /// The type gradient sums travel in (docs/precision.md): fp32, or bf16 for half the bytes.
  ElementType gradient_precision = ElementType::fp32;
  /// "loss_scaling" as given; absent: on for fp16 runs (with its defaults), off otherwise.
  std::optional<LossScalingOptions> loss_scaling;
  bool check_replicas = check_replicas_by_default();  // compare replicas after every step
  std::string resume_file;                            // checkpoint to start from, empty: fresh start
  /// Keep the checkpoint before the newest as CHECKPOINT.previous (--resume auto's fallback).
  bool keep_previous_checkpoint = false;
  bool progress = true;
  bool profile = false;
  /// The type activations are computed in (docs/precision.md); parameters stay fp32.
  ElementType precision = ElementType::fp32;
  /// "precision": "tf32": fp32 data with TF32 tensor-core products in cuDNN's convolutions.
  bool tf32 = false;
  std::string precision_key = "$.training.precision";  // where it was set, for errors
  /// Where each count was set (its config key, or the flag that overrode it), for errors.
  struct Sources {
    std::string epochs = "$.training.epochs", batch_size = "$.training.batch_size",
                accumulate = "$.training.accumulate", max_steps = "$.training.max_steps";
  } sources;
  /// Validation metrics by name (MetricChoice); none given: the loss's defaults.
  std::optional<std::vector<std::string>> metrics;
  /// The first epochs, in which layers that learn by a local rule (BCPNN) learn and nothing
  /// is trained by gradients; in the epochs after them those layers are fixed and the others
  /// train. From the run config's "local_learning" section.
  int64_t local_learning_epochs = 0;
  /// How each global batch splits over the ranks: "balance" (BalanceOptions).
  BalanceOptions balance;

  /// Reads {"epochs", "batch_size", "accumulate", "max_steps", "seed", "log_every", "precision",
  /// "gradient_precision", "loss_scaling", "metrics", "checkpoint": {"path", "every_steps"}}.
  static TrainingOptions from_json(ConfigObject& cfg);
};

/// What a run produced, for the caller and for tests.
struct TrainingReport {
  std::vector<double> logged_losses;     // mean training loss of each logging window
  std::vector<double> step_losses;       // every step's training loss
  double validation_loss = -1.0;         // last validation (−1: none)
  double validation_baseline = -1.0;     // loss of predicting the mean target (regression)
  double validation_accuracy = -1.0;     // classification only
  ValidationMetrics validation_metrics;  // last validation's chosen metrics
  int64_t steps = 0;
  double samples_per_second = 0.0;
  double peak_rss_mb_max_rank = 0.0;  // peak resident memory of the rank that used the most
  int stop_signal = 0;                // the stop request that ended the run early (see Trainer), 0: none
};

/// Loss of the model on the validation set, and what it is compared with.
struct ValidationResult {
  double loss = 0.0;
  double baseline = -1.0;     // loss of predicting the mean target (regression), −1: none
  double accuracy = -1.0;     // classification only, −1: none
  ValidationMetrics metrics;  // those the run chose (TrainingOptions::metrics)
};

/// Runs epochs of synchronous mini-batch training: shuffle (from seed and epoch), forward,
/// loss, backward, optimizer step. Which samples each rank reads is the BatchPlan's; what
/// happens around the steps (validation, metrics log, console progress, checkpoints, profile,
/// and what the owner adds) is done by TrainerHooks, called in that order. With several ranks
/// in `group` each rank reads its block of every global mini-batch — its slice of the samples
/// and, under a spatial split, its box of each — as the model's input distribution says, and
/// the gradients are summed over the group before each step, so the result equals one rank
/// training on the whole batch; rank 0 alone prints, logs and writes checkpoints.
///
/// A stop request (core/stop_request.hpp: a SIGTERM, SIGINT or SIGUSR1 under the installed
/// handlers) ends the run after the current step. A signal may reach only some ranks, or reach
/// them in different steps, so the ranks agree on it in the collective every step already
/// makes (finish_gradients) and all stop after the same step; the run then ends as after its
/// last step (final checkpoint, "end" record) and the report names the signal.
class Trainer {
 public:
  /// `optimizer_config` is the run config's "optimizer" section, for its "schedule" and
  /// "lr_scaling" (optim::OptimizerSection).
  Trainer(model::Model& model, layers::Loss& loss, optim::Optimizer& optimizer, io::DataSplit& data,
          const TrainingOptions& options, const nlohmann::json& optimizer_config,
          parallel::Communicator group = parallel::Communicator::world());
  ~Trainer();
  TrainingReport run();
  /// Adds a hook, called after the standard ones at every point of every later run.
  void add_hook(std::unique_ptr<TrainerHook> hook);
  /// Takes training batches from `source` instead of the training set's samples (validation
  /// still reads the validation set). The training set then only sets the epoch's length
  /// (its samples / the batch) and the shapes.
  /// Refused (ConfigError) under a balance other than "even": a source fixes its rows.
  void set_training_source(std::unique_ptr<BatchSource> source);
  /// Seconds this rank computed steps (reading, forward, loss, backward; not the time blocked
  /// in MPI, parallel::WaitClock, nor the wait for the gradient sum) over the trainer's life.
  double compute_seconds() const { return compute_seconds_; }
  /// Gives sample group g of the model input's grid rows[g] samples of each global batch
  /// (every layer's blocks follow; collective: every rank passes the same rows). `why` is
  /// said in errors.
  void set_group_rows(const std::vector<int64_t>& rows, const std::string& why);

  int64_t steps_per_epoch() const { return plan_->steps_per_epoch(); }
  /// The step count a run stops at: every epoch's steps, or training.max_steps if fewer.
  int64_t last_step() const {
    const int64_t all = options_.epochs * steps_per_epoch();
    return options_.max_steps > 0 ? std::min(options_.max_steps, all) : all;
  }
  /// Samples per optimizer step over all ranks: batch_size · accumulate.
  int64_t update_batch() const { return options_.batch_size * options_.accumulate; }
  /// The order in which epoch `epoch` visits the training samples (a permutation that depends
  /// only on the seed and the epoch).
  std::vector<int64_t> epoch_order(int64_t epoch) const { return plan_->epoch_order(epoch); }

  // What hooks work with.
  model::Model& model() { return model_; }
  optim::Optimizer& optimizer() { return optimizer_; }
  const TrainingOptions& options() const { return options_; }
  const parallel::Communicator& group() const { return group_; }
  const BatchPlan& plan() const { return *plan_; }
  const io::DataSplit& data() const { return data_; }
  /// The validation metrics this run reports.
  const MetricChoice& metric_choice() const { return metric_choice_; }
  const optim::LrSchedule& schedule() const { return *schedule_; }
  double lr_factor() const { return lr_factor_; }
  /// Optimizer steps of the local-learning epochs (TrainingOptions::local_learning_epochs).
  int64_t local_learning_steps() const { return local_steps_; }
  bool learns_locally(int64_t step) const { return step < local_steps_; }
  /// The layers that learn by a local rule (LayerTraits::learns_locally), comma-separated.
  const std::string& local_learning_layers() const { return local_layers_; }
  /// The learning rate of step `step`: the schedule's (which starts after the local-learning
  /// steps), scaled with the global batch
  /// (lr_factor) and following the optimizer's base rate where that was changed after the
  /// schedule was made (a population's trainers vary it).
  double lr(int64_t step) const;
  /// Dynamic loss scaling (off unless the run is fp16 or asks for it).
  const LossScaler& loss_scaler() const { return scaler_; }
  /// What a checkpoint after `steps` steps records of the run: the steps, the seed and the
  /// loss scaler's state.
  TrainingProgress progress_at(int64_t steps) const;
  /// Seconds this rank waited for gradient sums, over the trainer's life.
  double allreduce_wait_seconds() const { return reducer_->wait_seconds(); }
  /// The report of the run under way.
  TrainingReport& report() { return report_; }
  /// The run's metrics log (writes nothing without a file or off rank 0) and console
  /// progress; they exist while run() goes on.
  MetricsLog& metrics() { return *metrics_; }
  /// Whether the group writes a metrics log (some rank was given one): the same answer on
  /// every rank, so a hook may gather collectively what only the log needs.
  bool logs_metrics() const { return logs_metrics_; }
  ProgressReporter& progress() { return *progress_; }
  /// Evaluates the model on the validation set; every rank of the group must call it.
  ValidationResult validate();
  /// Evaluates the model on the samples of `data` (as many as split evenly over the model's
  /// sample groups), as validate() does the validation set; every rank of the group must
  /// call it.
  ValidationResult evaluate(io::Dataset& data);
  /// The ranks that stop together after a stop request (core/stop_request.hpp): the group by
  /// default; a job of several trainers gives all of its ranks, so that no trainer runs on
  /// into a tournament with a partner that stopped. Over a wider group the stop is agreed
  /// one step late without blocking (parallel::LaggedAgreement), so trainers are not held
  /// in lock-step: a request seen in step s stops every trainer after step s + 1.
  void set_stop_group(parallel::Communicator ranks);

 private:
  void check_data_and_loss() const;
  void choose_metrics();
  void check_batch() const;
  /// The first samples of a set of `available` that evaluation reads: all but a last short
  /// batch too small to give every sample group a sample.
  int64_t evaluated_samples(int64_t available) const;
  void check_distributions() const;
  /// Finds the layers that learn locally; refuses local-learning epochs without one, warns of
  /// the reverse.
  void check_local_learning();
  void make_reducer();
  void make_plan();
  /// Sets the weights of a "balance" given as weights, and checks that the batch splits.
  void apply_balance_weights();
  /// (Re)allocates the batch's inputs, targets and loss gradient for this rank's rows.
  void allocate_batch_buffers();
  std::vector<TrainerHook*> start_run();
  int64_t resume();
  /// One optimizer step on this rank's part of step `step`'s batch; returns the mean loss.
  double train_step(int64_t step, int64_t last_step, float lr);
  /// Forward and backward of micro-batch `micro` of step `step`; returns this rank's loss sum.
  double micro_step(int64_t step, int64_t micro, int64_t last_step);
  /// Step `step` of the local-learning epochs: forward passes in which local rules learn, the
  /// loss for the log, no gradients; returns the mean loss.
  double local_learning_step(int64_t step, int64_t last_step);
  /// Loads micro-batch `micro` of step `step` and starts reading the next one.
  void load_micro_batch(int64_t step, int64_t micro, int64_t last_step);
  /// Backprop's note that gradients at index >= first_final are final: adds the earlier
  /// micro-batches' sum there, then lets the reducer start on them.
  void gradients_final_from(int64_t first_final);
  /// Waits for the gradient sum and sums `loss` over the group; tracks the exposed wait and
  /// agrees on a stop request (over the stop group) and, under loss scaling, on whether any
  /// rank's gradients overflowed (`finite`).
  double finish_gradients(double loss, bool& finite);
  /// Sums `loss` over the group and agrees on a stop request and on `overflow` (any rank's);
  /// returns the summed loss.
  double agree_on_step(double loss, double waited, bool& overflow);
  /// This rank's block of `rows` samples' inputs, and of their targets.
  Shape local_input_shape(int64_t rows) const;
  Shape local_target_shape(int64_t rows, const Shape& per_sample) const;
  /// The part of `targets` (read for the input's distribution) the loss compares with
  /// `prediction` (this rank's block under the output's distribution).
  Tensor loss_targets(const Tensor& targets, const Tensor& prediction, int64_t global_rows) const;
  /// evaluate() over the first `n` samples of `data`.
  ValidationResult evaluate_first(io::Dataset& data, int64_t n);

  model::Model& model_;
  layers::Loss& loss_;
  optim::Optimizer& optimizer_;
  io::DataSplit& data_;
  TrainingOptions options_;
  parallel::Communicator group_;
  parallel::Communicator stop_group_;
  std::unique_ptr<parallel::LaggedAgreement> stop_agreement_;  // over a stop group wider than the group
  std::unique_ptr<parallel::GradientReducer> reducer_;
  std::unique_ptr<BatchPlan> plan_;
  double sample_parts_ = 1;   // each sample of the model output over this rank's block of it
  int64_t local_steps_ = 0;   // steps of the local-learning epochs
  std::string local_layers_;  // local_learning_layers()
  MetricChoice metric_choice_;
  std::unique_ptr<BatchDomainCheck> domain_check_;  // every batch against the model's and loss's domains
  bool logs_metrics_ = false;
  std::unique_ptr<optim::LrSchedule> schedule_;
  double lr_factor_ = 1.0;  // linear scaling with the global batch ("optimizer.lr_scaling")
  Tensor inputs_, targets_, grad_;
  Tensor accumulated_;            // the gradient sum of a step's earlier micro-batches (accumulate > 1)
  int64_t accumulated_from_ = 0;  // where the last micro-batch's gradients already hold that sum
  // The run under way: its report, outputs, and hooks (the standard ones are made afresh for
  // each run, like its log).
  TrainingReport report_;
  double exposed_wait_ = 0.0;  // all-reduce seconds no rank could hide (see finish_gradients)
  double compute_seconds_ = 0.0;
  int agreed_stop_ = 0;        // the largest stop signal any rank had at the last step, 0: none
  LossScaler scaler_;
  bool skipped_ = false;  // the last step was skipped (its gradients overflowed)
  std::unique_ptr<MetricsLog> metrics_;
  std::unique_ptr<ProgressReporter> progress_;
  std::vector<std::unique_ptr<TrainerHook>> standard_hooks_, added_hooks_;
  std::unique_ptr<BatchSource> source_;  // null: the training set's samples, in the plan's order
};

/// Peak resident memory of this process in MiB.
double peak_rss_mb();

}  // namespace tessera::train
