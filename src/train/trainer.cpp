#include "tessera/train/trainer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <tuple>
#include <utility>

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/process_memory.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/core/seconds_since.hpp"
#include "tessera/core/stop_request.hpp"
#include "tessera/model/memory_check.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/optim/optimizer_section.hpp"
#include "tessera/parallel/wait_clock.hpp"
#include "tessera/train/checkpoint_hook.hpp"
#include "tessera/train/metrics_hook.hpp"
#include "tessera/train/parameter_tensor_layout.hpp"
#include "tessera/train/profile_hook.hpp"
#include "tessera/train/progress_hook.hpp"
#include "tessera/train/validation_hook.hpp"

namespace tessera::train {
namespace {

/// Batch norm's running statistics follow each replica's own samples. Averaged after every
/// step, the replicas stay one model: they validate alike, and the checkpoint (rank 0's)
/// holds what every rank holds, so a resumed run continues the uninterrupted one. The sum is
/// the same on every rank, and so is its scaling. Ranks of a spatial group already agree;
/// their average changes nothing.
/// A buffer that is a shard of a channel-split layer is averaged over the ranks holding that
/// shard only.
void average_over_replicas(const parallel::Communicator& group, const model::ParameterStore& parameters) {
  const Tensor& buffers = parameters.buffers();
  if (group.is_serial() || buffers.numel() == 0) return;
  bool all_averaged = true;  // no layer keeps a buffer equal itself
  for (const auto& p : parameters.all()) all_averaged = all_averaged && (p->trainable || !p->synchronized);
  if (!parameters.has_shards() && all_averaged) {
    group.allreduce_sum(buffers);
    kokkos_backend::axpby(1.0f / static_cast<float>(group.size()), buffers, 0.0f, buffers);
    return;
  }
  for (const auto& p : parameters.all()) {
    if (p->trainable || p->synchronized) continue;
    const parallel::Communicator& replicas = p->shard.split() ? p->shard.replicas : group;
    if (replicas.is_serial()) continue;
    replicas.allreduce_sum(p->value);
    kokkos_backend::axpby(1.0f / static_cast<float>(replicas.size()), p->value, 0.0f, p->value);
  }
}
using Clock = std::chrono::steady_clock;

Shape batch_shape(int64_t batch, const Shape& sample) {
  std::vector<int64_t> dims{batch};
  for (auto d : sample.dims()) dims.push_back(d);
  return Shape(dims);
}
}  // namespace

TrainingOptions TrainingOptions::from_json(ConfigObject& cfg) {
  TrainingOptions o;
  using L = TrainingLimits;
  o.epochs = cfg.integer_in("epochs", L::epochs.min, L::epochs.max, 1);
  o.batch_size = cfg.integer_in("batch_size", L::batch_size.min, L::batch_size.max, 8);
  o.accumulate = cfg.integer_in("accumulate", L::accumulate.min, L::accumulate.max, 1);
  o.max_steps = cfg.integer_in("max_steps", L::max_steps.min, L::max_steps.max, 0);
  o.seed = static_cast<uint64_t>(cfg.integer_in("seed", L::seed.min, L::seed.max, 0));
  o.log_every = cfg.integer_in("log_every", 1, 1 << 30, 10);
  o.allreduce_bucket_kb = cfg.integer_in("allreduce_bucket_kb", 1, 1 << 30, 4096);
  o.allreduce_progress_thread = cfg.boolean("allreduce_progress_thread", o.allreduce_progress_thread);
  if (cfg.choice("gradient_combination", {"sum", "adasum"}, "sum") == "adasum")
    o.gradient_combination = parallel::GradientCombination::adasum;
  o.check_replicas = cfg.boolean("check_replicas", o.check_replicas);
  if (cfg.has("loss_scaling")) {
    auto section = cfg.object("loss_scaling");
    o.loss_scaling = LossScalingOptions::from_json(section);
  }
  if (cfg.has("gradient_precision")) {
    const auto type = parse_element_type(cfg.choice("gradient_precision", {"fp32", "bf16", "fp16"}, "fp32"));
    if (type == ElementType::fp16)
      throw ConfigError(cfg.path_of("gradient_precision"),
                        "gradients summed in fp16 would overflow above 65504 and lose small values below 6e-8 "
                        "without loss scaling; use \"bf16\" (fp32's range) or \"fp32\"");
    o.gradient_precision = *type;
  }
  if (cfg.has("precision")) {
    // tf32: fp32 data; the math mode goes to the cuDNN backend.
    const model::RunPrecision p = model::parse_run_precision(cfg.string("precision"), cfg.path_of("precision"));
    o.precision = p.type;
    o.tf32 = p.tf32;
  }
  o.precision_key = cfg.path_of("precision");
  if (cfg.has("metrics")) {
    o.metrics = cfg.string_list("metrics", {});
    MetricChoice::from_names(*o.metrics, cfg.path_of("metrics"));  // unknown names fail here, before any data is read
  }
  if (cfg.has("balance")) o.balance = BalanceOptions::parse(cfg.value("balance"), cfg.path_of("balance"));
  if (cfg.has("checkpoint")) {
    auto ck = cfg.object("checkpoint");
    o.checkpoint_file = ck.string("path");
    o.checkpoint_every =
        ck.integer_in("every_steps", TrainingLimits::checkpoint_every.min, TrainingLimits::checkpoint_every.max, 0);
    ck.finish();
  }
  cfg.finish();
  return o;
}

namespace {

/// How many times each sample of the model output `global` is this rank's block of it
/// (Loss::evaluate): its whole extent over its block's under a spatial split (blocks may
/// differ), the spatial group's size for features copied over the group.
double sample_parts_of(const parallel::ProcessGrid& grid, const Shape& global) {
  if (global.rank() <= 2 || !grid.distribution().is_spatial()) return grid.spatial().size();
  const auto whole = parallel::spatial_size_of(global);
  const parallel::Box box = grid.local_box(whole, "model output");
  return static_cast<double>(whole[0] * whole[1] * whole[2]) / static_cast<double>(box.volume());
}

/// D, H, W of a per-sample input shape ([D, H, W, C], [H, W, C] or [F]).
std::array<int64_t, 3> sample_spatial_size(const Shape& sample) {
  if (sample.rank() == 4) return {sample[0], sample[1], sample[2]};
  if (sample.rank() == 3) return {1, sample[0], sample[1]};
  return {1, 1, 1};
}

/// The steps since the last logged loss: their mean loss and throughput.
class LossWindow {
 public:
  void add(double loss) {
    loss_sum_ += loss;
    ++steps_;
  }
  /// Closes the window: its mean loss and samples per second; the next one starts now.
  std::pair<double, double> close(int64_t batch) {
    const double elapsed = seconds_since(start_);
    const double mean = loss_sum_ / static_cast<double>(steps_);
    const double rate = static_cast<double>(steps_ * batch) / std::max(elapsed, 1e-9);
    loss_sum_ = 0.0;
    steps_ = 0;
    start_ = Clock::now();
    return {mean, rate};
  }

 private:
  double loss_sum_ = 0.0;
  int64_t steps_ = 0;
  Clock::time_point start_ = Clock::now();
};

/// Sums of a regression's per-sample targets and their squares, for the predict-the-mean
/// baseline.
struct TargetMoments {
  std::vector<double> sum, sq;
  void add(const std::vector<float>& targets) {
    const size_t per = sum.size();
    for (size_t i = 0; i < targets.size(); ++i) {
      sum[i % per] += targets[i];
      sq[i % per] += static_cast<double>(targets[i]) * targets[i];
    }
  }
  /// MSE of always predicting the mean target of `n` samples: the bar a model must beat.
  double baseline(int64_t n) const {
    double baseline = 0.0;
    for (size_t k = 0; k < sum.size(); ++k) {
      const double mean = sum[k] / static_cast<double>(n);
      baseline += sq[k] / static_cast<double>(n) - mean * mean;
    }
    return baseline / static_cast<double>(sum.size());
  }
};

}  // namespace

Trainer::Trainer(model::Model& model, layers::Loss& loss, optim::Optimizer& optimizer, io::DataSplit& data,
                 const TrainingOptions& options, const nlohmann::json& optimizer_config, parallel::Communicator group)
    : model_(model),
      loss_(loss),
      optimizer_(optimizer),
      data_(data),
      options_(options),
      group_(group),
      stop_group_(group) {
  check_data_and_loss();
  choose_metrics();
  domain_check_ = std::make_unique<BatchDomainCheck>(model_, loss_, model_.output_shape(1));
  // Found out now, not after hours of training when the first checkpoint is written.
  if (!options_.checkpoint_file.empty()) require_writable_location(options_.checkpoint_file, "checkpoints");
  check_batch();
  check_distributions();
  // Agreed over the group: a program may name the log on its first rank only, and hooks gather
  // for the log collectively.
  int64_t logged = options_.metrics_file.empty() ? 0 : 1;
  group_.allreduce_sum(&logged, 1);
  logs_metrics_ = logged > 0;
  if (group_.rank() != 0) options_.metrics_file.clear();  // one log, one checkpoint, one console
  optimizer_.set_tensors(parameter_tensor_layout(model_.parameters()));
  optimizer_.bind(model_.parameters().values(), model_.parameters().grads());
  make_reducer();
  const optim::OptimizerSection section(optimizer_config);
  lr_factor_ = section.lr_factor(update_batch());
  const int64_t steps_per_epoch = data_.train->size() / update_batch();
  // Steps are counted in int64 (the schedule, the checkpoint's step, max_steps).
  checked_product(options_.epochs, steps_per_epoch, options_.sources.epochs,
                  "the run's steps (epochs x steps per epoch)");
  local_steps_ = options_.local_learning_epochs * steps_per_epoch;
  check_local_learning();
  schedule_ = section.make_schedule(optimizer_.base_lr(),
                                    std::max<int64_t>(options_.epochs * steps_per_epoch - local_steps_, 1));
  apply_balance_weights();
  make_plan();
  allocate_batch_buffers();
  sample_parts_ = sample_parts_of(model_.output_grid(), model_.output_shape(options_.batch_size));
  if (options_.accumulate > 1 && model_.parameters().trainable_count() > 0)
    accumulated_ = Tensor(model_.parameters().grads().shape(), "tessera::accumulated_grads");
  if (options_.loss_scaling) {
    scaler_ = LossScaler(*options_.loss_scaling);
  } else if (options_.precision == ElementType::fp16) {
    LossScalingOptions on;
    on.enabled = true;
    scaler_ = LossScaler(on);
  }
}

Trainer::~Trainer() = default;

void Trainer::allocate_batch_buffers() {
  // Inputs and targets are read for this rank's block under the input distribution; the loss
  // sees its block of the targets under the output distribution.
  inputs_ = Tensor(local_input_shape(plan_->local_batch()), "tessera::batch_inputs");
  targets_ = Tensor(local_target_shape(plan_->local_batch(), data_.train->target_shape()), "tessera::batch_targets");
  grad_ = Tensor(model_.output_grid().local_shape(model_.output_shape(options_.batch_size), "model output"),
                 "tessera::loss_grad");
}

void Trainer::apply_balance_weights() {
  const BalanceOptions& b = options_.balance;
  if (b.kind != BalanceOptions::Kind::weights) return;
  if (static_cast<int>(b.weights.size()) != group_.size())
    throw ConfigError(b.key, std::to_string(b.weights.size()) + " weights for the " + std::to_string(group_.size()) +
                                 " ranks of the run; give one per rank");
  model_.sample_shares().set_weights(b.integer_weights(), b.key);
  if (!model_.splits(options_.batch_size))
    throw ConfigError(b.key, "these weights leave a sample group without a sample of the batch of " +
                                 std::to_string(options_.batch_size) + "; raise the smallest or the batch");
  // The start's memory check weighed even shares; a heavier share is weighed on its own rank.
  const model::RankMemory memory = model::memory_per_rank_here(group_);
  const int64_t rows = model_.input_grid().local_batch(options_.batch_size, "model input");
  const int64_t holds = rows_memory_holds(model_, options_.batch_size, rows, memory.bytes);
  if (holds > 0 && rows > holds)
    throw ConfigError(b.key, "rank " + std::to_string(group_.rank()) + "'s share, " + std::to_string(rows) +
                                 " samples of " + std::to_string(options_.batch_size) +
                                 ", needs more than its part of " + memory.text + " holds (about " +
                                 std::to_string(holds) + " samples); lower its weight or the batch");
}

void Trainer::set_group_rows(const std::vector<int64_t>& rows, const std::string& why) {
  const int groups = model_.input_grid().distribution().sample;
  if (static_cast<int>(rows.size()) != groups)
    throw Error(why + ": " + std::to_string(rows.size()) + " shares for " + std::to_string(groups) + " sample groups");
  // Each rank of group g weighs rows[g]: the groups' weights are then rows[g] times the ranks
  // per group, so a batch of batch_size splits exactly into `rows`.
  const int per_group = group_.size() / groups;
  std::vector<int64_t> weights;
  for (int r = 0; r < group_.size(); ++r) weights.push_back(rows[static_cast<size_t>(r / per_group)]);
  model_.sample_shares().set_weights(std::move(weights), why);
  if (!model_.splits(options_.batch_size))
    throw Error(why + ": the new shares leave a sample group of some layer without a sample");
  allocate_batch_buffers();
}

void Trainer::set_training_source(std::unique_ptr<BatchSource> source) {
  if (options_.balance.kind != BalanceOptions::Kind::even)
    throw ConfigError(options_.balance.key,
                      "this kind of run takes its training rows from its own source, which splits the batch evenly; "
                      "use \"even\"");
  source_ = std::move(source);
}

void Trainer::check_data_and_loss() const {
  if (!data_.train) throw Error("training needs a training dataset");
  const Shape& data_sample = data_.train->sample_shape();
  const Shape& model_sample = model_.sample_shape();
  // Data files always hold [D, H, W, C]; a 2D model ([H, W, C]) reads samples of depth 1.
  const bool depth_one_for_2d = model_sample.rank() == 3 && data_sample.rank() == 4 && data_sample[0] == 1 &&
                                data_sample[1] == model_sample[0] && data_sample[2] == model_sample[1] &&
                                data_sample[3] == model_sample[2];
  if (data_sample != model_sample && !depth_one_for_2d)
    throw ConfigError("$.data", "samples have shape " + data_sample.str() + " (D, H, W, C) but the model input is " +
                                    model_sample.str() +
                                    (model_sample.rank() == 3 ? " (a 2D model reads samples of depth 1)" : ""));
  const Shape out = model_.output_shape(1);
  const Shape want_target = loss_.target_shape(out);
  const Shape have_target = batch_shape(1, data_.train->target_shape());
  if (want_target.numel() != have_target.numel())
    throw ConfigError("$.loss", "loss '" + loss_.type() + "' on model output " + out.str() + " needs targets " +
                                    want_target.str() + " per sample, the data provides " + have_target.str());
}

void Trainer::choose_metrics() {
  const Shape out = model_.output_shape(1);
  const std::string path = "$.training.metrics";
  metric_choice_ = options_.metrics ? MetricChoice::from_names(*options_.metrics, path)
                                    : MetricChoice::defaults(loss_.type(), out.rank() > 2);
  metric_choice_.check(loss_.type(), out[out.rank() - 1], path);
}

void Trainer::check_batch() const {
  if (data_.train->size() / options_.batch_size == 0)
    throw ConfigError(options_.sources.batch_size, "batch size " + std::to_string(options_.batch_size) + " exceeds the " +
                                                   std::to_string(data_.train->size()) + " training samples");
  if (data_.train->size() / update_batch() == 0)
    throw ConfigError(options_.sources.accumulate, std::to_string(options_.accumulate) + " accumulated micro-batches of " +
                                                   std::to_string(options_.batch_size) + " make a step of " +
                                                   std::to_string(update_batch()) + " samples, more than the " +
                                                   std::to_string(data_.train->size()) + " training samples");
  const int64_t least = model_.min_batch();
  if (options_.batch_size < least)
    throw ConfigError(options_.sources.batch_size, "the global batch of " + std::to_string(options_.batch_size) +
                                                   " samples leaves some of the model's " + std::to_string(least) +
                                                   " sample groups without a sample; use at least " +
                                                   std::to_string(least));
}

void Trainer::check_distributions() const {
  const parallel::ProcessGrid& in_grid = model_.input_grid();
  const parallel::ProcessGrid& out_grid = model_.output_grid();
  const Shape out = model_.output_shape(1);
  const bool voxel_targets = batch_shape(1, data_.train->target_shape()).rank() > 2 || out.rank() > 2;
  // Checked first: a channel split also changes the sample groups, and that message would hide why.
  const std::string last = "the last layer '" + model_.layer(model_.num_layers() - 1).name() + "'";
  if (out_grid.distribution().splits_channels())
    throw ConfigError("$.model.layers", last + " splits the model output's channels (distribution " +
                                            out_grid.distribution().str() +
                                            "); the loss needs whole outputs, so give it a distribution without "
                                            "\"channel\"/\"filter\", e.g. " +
                                            in_grid.distribution().str());
  if (!in_grid.distribution().same_layout(out_grid.distribution())) {
    if (voxel_targets)
      throw ConfigError("$.model.layers",
                        "the model output " + out.str() + " has per-voxel targets but its distribution " +
                            out_grid.distribution().str() + " differs from the input's " +
                            in_grid.distribution().str() + "; give the last layer the input's distribution");
    if (out_grid.distribution().sample % in_grid.distribution().sample != 0)
      throw ConfigError("$.model.layers", "the last layer's distribution " + out_grid.distribution().str() +
                                              " splits the batch into fewer sample groups than the input's " +
                                              in_grid.distribution().str() + "; its targets would live on other ranks");
  }
  const bool uneven = options_.balance.kind != BalanceOptions::Kind::even ||
                      options_.batch_size % model_.input_grid().distribution().sample != 0;
  if (options_.gradient_combination == parallel::GradientCombination::adasum && uneven)
    throw ConfigError("$.training.gradient_combination",
                      "adasum combines the gradients of equal shares of the batch; this run splits the batch of " +
                          std::to_string(options_.batch_size) + " unevenly over " +
                          std::to_string(model_.input_grid().distribution().sample) + " sample groups");
  if (options_.gradient_combination == parallel::GradientCombination::adasum && model_.has_spatial_split())
    throw ConfigError("$.training.gradient_combination",
                      "adasum combines whole-sample gradients of sample groups; this model splits samples in space");
  if (options_.gradient_combination == parallel::GradientCombination::adasum &&
      options_.gradient_precision != ElementType::fp32)
    throw ConfigError("$.training.gradient_precision",
                      "adasum combines gradients in fp32 (its projections need the precision); "
                      "gradient_precision applies to gradient_combination \"sum\"");
  if (options_.gradient_combination == parallel::GradientCombination::adasum && model_.parameters().has_shards())
    throw ConfigError("$.training.gradient_combination",
                      "adasum combines whole models; this model splits or shards some layers' weights");
}

void Trainer::make_reducer() {
  if (options_.gradient_combination == parallel::GradientCombination::adasum) {
    // Adasum combines each parameter tensor on its own.
    reducer_ = std::make_unique<parallel::GradientReducer>(
        model_.parameters().grads(),
        parallel::Adasum(group_, model_.parameters().trainable_offsets(), "$.training.gradient_combination"));
  } else {
    // A shard's gradient sums over the ranks holding that shard, every other one over all.
    std::vector<parallel::Communicator> tensor_groups;
    for (const auto& p : model_.parameters().all())
      if (p->trainable) tensor_groups.push_back(p->shard.split() ? p->shard.replicas : group_);
    reducer_ = std::make_unique<parallel::GradientReducer>(
        group_, model_.parameters().grads(), model_.parameters().trainable_offsets(),
        options_.allreduce_bucket_kb * 1024 / 4, tensor_groups, options_.allreduce_progress_thread,
        options_.gradient_precision);
  }
}

void Trainer::make_plan() {
  const BatchSlot slot =
      BatchSlot::of(model_.input_grid(), sample_spatial_size(model_.sample_shape()), options_.batch_size);
  int64_t validation_samples = 0;
  if (data_.validation) {
    validation_samples = evaluated_samples(data_.validation->size());
    if (validation_samples < data_.validation->size() && group_.rank() == 0)
      log::warn("validation uses " + std::to_string(validation_samples) + " of its " +
                std::to_string(data_.validation->size()) + " samples: the last batch would leave some of the " +
                std::to_string(model_.min_batch()) + " sample groups without a sample");
  }
  plan_ = std::make_unique<BatchPlan>(data_.train->size(), validation_samples, options_.batch_size, options_.seed, slot,
                                      options_.accumulate);
}

Shape Trainer::local_input_shape(int64_t rows) const {
  std::vector<int64_t> dims{rows};
  const Shape& sample = model_.sample_shape();
  const int spatial = sample.rank() - 1;  // 3 for [D, H, W, C], 2 for [H, W, C], 0 for [F]
  for (int k = 0; k < spatial; ++k) dims.push_back(plan_->box().extent[static_cast<size_t>(3 - spatial + k)]);
  dims.push_back(sample[sample.rank() - 1]);
  return Shape(dims);
}

Shape Trainer::local_target_shape(int64_t rows, const Shape& per_sample) const {
  // Per-voxel targets ([D, H, W] or [D, H, W, 1]) are cut by the same box as the inputs.
  std::vector<int64_t> dims{rows};
  const int spatial = model_.sample_shape().rank() - 1;
  const bool voxel = spatial >= 2 && per_sample.rank() >= spatial;
  for (int k = 0; k < per_sample.rank(); ++k)
    dims.push_back(voxel && k < spatial ? plan_->box().extent[static_cast<size_t>(3 - spatial + k)] : per_sample[k]);
  return Shape(dims);
}

Tensor Trainer::loss_targets(const Tensor& targets, const Tensor& prediction, int64_t global_rows) const {
  const parallel::ProcessGrid& in_grid = model_.input_grid();
  const parallel::ProcessGrid& out_grid = model_.output_grid();
  const Shape wanted = loss_.target_shape(prediction.shape());
  if (in_grid.distribution().same_layout(out_grid.distribution())) return targets.reshaped(wanted);
  // Per-sample targets of the output's sample groups: a run of the rows read for the input's
  // (larger) sample groups, since ranks are numbered with samples slowest.
  const int64_t offset = out_grid.first_sample(global_rows, "model output") - plan_->first_row(global_rows);
  const int64_t per_row = targets.numel() / std::max<int64_t>(targets.shape()[0], 1);
  return targets.slice(offset * per_row, wanted);
}

ValidationResult Trainer::validate() { return evaluate_first(*data_.validation, plan_->validation_size()); }

ValidationResult Trainer::evaluate(io::Dataset& data) {
  const int64_t n = evaluated_samples(data.size());
  if (n == 0)
    throw Error("cannot evaluate on " + data.describe() + ": its " + std::to_string(data.size()) +
                " sample(s) do not fill one batch over the model's " + std::to_string(model_.min_batch()) +
                " sample groups");
  return evaluate_first(data, n);
}

int64_t Trainer::evaluated_samples(int64_t available) const {
  // Whole batches, and a last short one while it still gives every sample group a sample
  // (the batch plan splits it as it splits every batch).
  const int64_t rest = available % options_.batch_size;
  if (rest == 0 || model_.splits(rest)) return available;
  return available - rest;
}

double Trainer::lr(int64_t step) const {
  if (learns_locally(step)) return 0.0;  // nothing follows gradients then
  return lr_factor_ * schedule_->lr(step - local_steps_) * (optimizer_.base_lr() / schedule_->base_lr());
}

void Trainer::check_local_learning() {
  for (size_t i = 0; i < model_.num_layers(); ++i)
    if (model_.layer(i).traits().learns_locally)
      local_layers_ += (local_layers_.empty() ? "" : ", ") + model_.layer(i).name();
  if (options_.local_learning_epochs > options_.epochs)
    throw ConfigError("$.local_learning.epochs", std::to_string(options_.local_learning_epochs) +
                                                     " local-learning epochs are more than the run's " +
                                                     std::to_string(options_.epochs) + " epochs");
  if (options_.local_learning_epochs > 0 && local_layers_.empty())
    throw ConfigError("$.local_learning.epochs",
                      "no layer of the model learns by a local rule (such as \"bcpnn\"): remove the section");
  if (options_.local_learning_epochs == 0 && !local_layers_.empty() && group_.rank() == 0)
    log::warn("layers " + local_layers_ +
              " learn by a local rule, but the run has no local-learning epochs ($.local_learning.epochs): they "
              "keep the weights they start with");
}

ValidationResult Trainer::evaluate_first(io::Dataset& ds, int64_t n) {
  ValidationResult v;
  double loss_sum = 0.0;
  std::array<int64_t, 2> counts{0, 0};  // correct, predictions
  // Target moments give the predict-the-mean baseline of a regression on per-sample targets;
  // unused otherwise. A spatial group holds copies of its samples' targets: one rank counts them.
  const bool regression = loss_.type() == "mse" && model_.output_shape(1).rank() == 2;
  const bool counts_targets = model_.output_grid().spatial().rank() == 0;
  const size_t moments = regression ? static_cast<size_t>(ds.target_shape().numel()) : 0;
  TargetMoments targets_seen{std::vector<double>(moments, 0.0), std::vector<double>(moments, 0.0)};
  // Metrics sum counts over rows; a row of a per-sample output is counted by one rank of its
  // spatial group, a voxel by the rank that holds it.
  const Shape out_shape = model_.output_shape(1);
  const bool per_voxel = out_shape.rank() > 2;
  const bool classification = loss_.type() == "softmax_cross_entropy";
  MetricSums metric_sums(metric_choice_, classification ? out_shape[out_shape.rank() - 1] : 0,
                         regression ? static_cast<int64_t>(moments) : 0);
  Tensor inputs, targets, no_grad;
  // Global batches in order, each rank taking its block, as in training.
  for (int64_t j = 0; j < plan_->evaluation_batches(n); ++j) {
    const int64_t global_rows = plan_->evaluation_rows(n, j);
    const std::vector<int64_t> idx = plan_->evaluation_samples(n, j);
    const auto rows = static_cast<int64_t>(idx.size());
    ensure_shape(inputs, local_input_shape(rows), "tessera::val_inputs");
    ensure_shape(targets, local_target_shape(rows, ds.target_shape()), "tessera::val_targets");
    ds.load(idx, plan_->box(), inputs, targets);
    domain_check_->check(inputs, targets, [&] {
      return "evaluation batch " + std::to_string(j) + " of " + ds.describe();
    });
    const std::vector<int64_t> next = plan_->evaluation_prefetch(n, j);
    if (!next.empty()) ds.prefetch(next, plan_->box());  // read while this batch is evaluated
    const Tensor& out = model_.forward(inputs, {layers::Mode::inference, 0, global_rows});
    const Tensor mine = loss_targets(targets, out, global_rows);
    const auto sums = loss_.evaluate(out, mine, n, no_grad, sample_parts_);
    loss_sum += sums.loss_sum;
    counts[0] += sums.correct;
    counts[1] += sums.predictions;
    if (regression && counts_targets) targets_seen.add(mine.to_host());
    if (!metric_choice_.empty() && (per_voxel || counts_targets)) {
      const std::vector<float> predicted = out.to_host(), wanted = mine.to_host();
      if (classification)
        metric_sums.add_classification(predicted.data(), wanted.data(), static_cast<int64_t>(wanted.size()));
      else
        metric_sums.add_regression(predicted.data(), wanted.data(), static_cast<int64_t>(wanted.size()));
    }
  }
  group_.allreduce_sum(&loss_sum, 1);
  group_.allreduce_sum(counts.data(), 2);
  group_.allreduce_sum(targets_seen.sum.data(), static_cast<int64_t>(targets_seen.sum.size()));
  group_.allreduce_sum(targets_seen.sq.data(), static_cast<int64_t>(targets_seen.sq.size()));
  v.loss = loss_sum / static_cast<double>(n);
  if (regression) v.baseline = targets_seen.baseline(n);
  if (counts[1] > 0) v.accuracy = static_cast<double>(counts[0]) / static_cast<double>(counts[1]);
  v.metrics = metric_sums.reduce(group_);
  return v;
}

void Trainer::add_hook(std::unique_ptr<TrainerHook> hook) { added_hooks_.push_back(std::move(hook)); }

void Trainer::set_stop_group(parallel::Communicator ranks) {
  stop_group_ = std::move(ranks);
  stop_agreement_ =
      stop_group_.size() > group_.size() ? std::make_unique<parallel::LaggedAgreement>(stop_group_) : nullptr;
}

std::vector<TrainerHook*> Trainer::start_run() {
  report_ = TrainingReport{};
  exposed_wait_ = 0.0;
  agreed_stop_ = 0;
  metrics_ = std::make_unique<MetricsLog>(options_.metrics_file);
  progress_ = std::make_unique<ProgressReporter>(options_.progress && group_.rank() == 0, options_.log_every);
  // In this order: a step's log lines come before its checkpoint and validation, and the
  // profile covers everything until the end.
  standard_hooks_.clear();
  standard_hooks_.push_back(std::make_unique<MetricsHook>());
  standard_hooks_.push_back(std::make_unique<ProgressHook>());
  standard_hooks_.push_back(std::make_unique<CheckpointHook>());
  if (data_.validation) standard_hooks_.push_back(std::make_unique<ValidationHook>());
  if (options_.balance.kind == BalanceOptions::Kind::measured)
    standard_hooks_.push_back(std::make_unique<ShareBalancer>());
  standard_hooks_.push_back(std::make_unique<ProfileHook>());
  std::vector<TrainerHook*> hooks;
  for (const auto* list : {&standard_hooks_, &added_hooks_})
    for (const auto& hook : *list) hooks.push_back(hook.get());
  return hooks;
}

TrainingProgress Trainer::progress_at(int64_t steps) const {
  TrainingProgress p{steps, options_.seed};
  if (scaler_.enabled()) {
    p.loss_scale = scaler_.scale();
    p.good_steps = scaler_.good_steps();
  }
  return p;
}

int64_t Trainer::resume() {
  if (options_.resume_file.empty()) return 0;
  const auto restored = load_checkpoint(options_.resume_file, model_.parameters(), optimizer_);
  scaler_.restore(restored.loss_scale, restored.good_steps);
  if (restored.seed != options_.seed)
    log::warn("checkpoint was written with seed " + std::to_string(restored.seed) + ", this run uses " +
              std::to_string(options_.seed) + ": the data order will differ from the original run");
  log::info("resumed from " + options_.resume_file + " at step " + std::to_string(restored.step));
  return restored.step;
}

TrainingReport Trainer::run() {
  const std::vector<TrainerHook*> hooks = start_run();
  int64_t step = resume();
  const int64_t per_epoch = steps_per_epoch(), b = update_batch();
  const int64_t last_step = this->last_step();
  for (auto* hook : hooks) hook->on_run_start(*this, {step, last_step});

  const auto run_start = Clock::now();
  LossWindow window;
  int64_t trained_samples = 0;
  while (step < last_step) {
    for (auto* hook : hooks) hook->on_step_start(*this, step);
    StepEnd e;
    e.epoch = step / per_epoch;
    e.last_step = last_step;
    e.lr = static_cast<float>(lr(step));
    e.loss = train_step(step, last_step, e.lr);
    e.step = ++step;
    trained_samples += b;
    report_.step_losses.push_back(e.loss);
    window.add(e.loss);
    e.epoch_end = step % per_epoch == 0;
    e.stop_signal = step < last_step ? agreed_stop_ : 0;  // after the last step there is nothing to stop
    e.window_end = step % options_.log_every == 0 || e.epoch_end || step == last_step || e.stop_signal != 0;
    if (e.window_end) {
      std::tie(e.window_loss, e.window_samples_per_s) = window.close(b);
      report_.logged_losses.push_back(e.window_loss);
    }
    e.allreduce_wait_s = reducer_->wait_seconds();
    e.skipped = skipped_;
    e.allreduce_exposed_s = exposed_wait_;
    for (auto* hook : hooks) hook->on_step_end(*this, e);
    if (e.stop_signal != 0) {
      report_.stop_signal = e.stop_signal;
      break;
    }
  }
  const double total_time = seconds_since(run_start);
  if (stop_agreement_) stop_agreement_->finish();  // every rank has one agreement in flight
  for (auto* hook : hooks) hook->on_training_end(*this, step);
  report_.steps = step;
  double max_peak_rss = peak_rss_mb();  // the largest rank's, for memory-per-rank reports
  group_.allreduce_max(&max_peak_rss, 1);
  report_.peak_rss_mb_max_rank = max_peak_rss;
  report_.samples_per_second = static_cast<double>(trained_samples) / std::max(total_time, 1e-9);
  for (auto* hook : hooks) hook->on_run_end(*this, {step, total_time});
  return report_;
}

double Trainer::train_step(int64_t step, int64_t last_step, float lr) {
  ProfileRegion region("step");
  if (learns_locally(step)) return local_learning_step(step, last_step);
  double loss_value = 0.0;
  // What this rank computed: the steps' time less what it spent blocked in MPI (a
  // synchronised batch norm or a halo exchange waits there for slower ranks).
  const auto compute_start = Clock::now();
  const double waited_before = parallel::WaitClock::seconds();
  for (int64_t micro = 0; micro < options_.accumulate; ++micro) loss_value += micro_step(step, micro, last_step);
  compute_seconds_ += seconds_since(compute_start) - (parallel::WaitClock::seconds() - waited_before);
  bool finite = true;
  loss_value = finish_gradients(loss_value, finite) / static_cast<double>(update_batch());
  const float scale = scaler_.scale();
  skipped_ = !scaler_.update(finite, model_.parameters().grads());
  if (skipped_ && group_.rank() == 0)
    log::info("step " + std::to_string(step + 1) + " skipped: its gradients overflowed at loss scale " +
              format("%g", scale) + "; the scale is now " + format("%g", scaler_.scale()));
  {
    ProfileRegion r("optimizer");
    if (!skipped_) optimizer_.step(lr);
    average_over_replicas(group_, model_.parameters());
    if (options_.check_replicas) check_replicas(group_, model_.parameters(), step + 1);
  }
  if (!std::isfinite(loss_value))
    throw Error("training diverged: the loss is " + std::to_string(loss_value) + " at step " + std::to_string(step) +
                " (try a lower learning rate)");
  return loss_value;
}

void Trainer::load_micro_batch(int64_t step, int64_t micro, int64_t last_step) {
  ProfileRegion r("data");
  if (source_) {
    source_->load(step, micro, inputs_, targets_);
    domain_check_->check(inputs_, targets_, [&] { return "the batch of step " + std::to_string(step) + " of its source"; });
    return;
  }
  data_.train->load(plan_->step_samples(step, micro), plan_->box(), inputs_, targets_);
  domain_check_->check(inputs_, targets_, [&] {
    return "the batch of step " + std::to_string(step) + " of the training data (" + data_.train->describe() + ")";
  });
  // The next micro-batch's samples are read while this one trains.
  const std::vector<int64_t> next = plan_->prefetch_samples(step, micro, last_step);
  if (!next.empty()) data_.train->prefetch(next, plan_->box());
}

double Trainer::local_learning_step(int64_t step, int64_t last_step) {
  const int64_t b = options_.batch_size, k = options_.accumulate;
  double loss_value = 0.0;
  for (int64_t micro = 0; micro < k; ++micro) {
    layers::StepInfo info{layers::Mode::training, step * k + micro, b};
    info.local_learning = true;
    load_micro_batch(step, micro, last_step);
    const Tensor& out = model_.forward(inputs_, info);
    if (source_) source_->observe(out);
    ProfileRegion r("loss");
    loss_value += loss_.evaluate(out, loss_targets(targets_, out, b), update_batch(), Tensor(), sample_parts_).loss_sum;
  }
  bool overflow = false;
  loss_value = agree_on_step(loss_value, 0.0, overflow) / static_cast<double>(update_batch());
  skipped_ = false;
  if (options_.check_replicas) check_replicas(group_, model_.parameters(), step + 1);
  return loss_value;
}

double Trainer::micro_step(int64_t step, int64_t micro, int64_t last_step) {
  const int64_t b = options_.batch_size, k = options_.accumulate;
  // Micro-batches draw their own dropout masks, as K steps of batch b would.
  const layers::StepInfo info{layers::Mode::training, step * k + micro, b};
  load_micro_batch(step, micro, last_step);
  const Tensor& out = model_.forward(inputs_, info);
  if (source_) source_->observe(out);
  double loss_value;
  {
    ProfileRegion r("loss");
    // Divided by the samples of the whole update, so that the accumulated sum is the gradient
    // of the mean loss over all of them.
    loss_value = loss_.evaluate(out, loss_targets(targets_, out, b), update_batch(), grad_, sample_parts_).loss_sum;
    if (scaler_.enabled()) kokkos_backend::axpby(scaler_.scale(), grad_, 0.0f, grad_);
  }
  // Each rank's gradient is already divided by the global batch, so the sum over ranks is
  // the gradient of the mean loss over the whole mini-batch. Buckets are reduced while
  // backprop goes on; finish_gradients() waits for what is still in flight.
  const bool has_parameters = model_.parameters().trainable_count() > 0;
  if (micro + 1 == k) {
    accumulated_from_ = model_.parameters().grads().numel();
    model_.backward(grad_, info, [this](int64_t first_final) { gradients_final_from(first_final); });
    gradients_final_from(0);
  } else {
    // Layers overwrite their parameter gradients, so earlier micro-batches keep their sum
    // aside, and nothing is reduced before the last one: one all-reduce per update.
    model_.backward(grad_, info, {});
    ProfileRegion r("accumulate");
    if (has_parameters && micro == 0) deep_copy(accumulated_, model_.parameters().grads());
    if (has_parameters && micro > 0) kokkos_backend::accumulate(model_.parameters().grads(), accumulated_);
  }
  return loss_value;
}

void Trainer::gradients_final_from(int64_t first_final) {
  if (options_.accumulate > 1 && first_final < accumulated_from_ && model_.parameters().trainable_count() > 0) {
    // The last micro-batch's gradients of these tensors are final: add the earlier ones'
    // before their buckets are reduced.
    const Tensor& grads = model_.parameters().grads();
    const Shape part{accumulated_from_ - first_final};
    kokkos_backend::accumulate(accumulated_.slice(first_final, part), grads.slice(first_final, part));
  }
  accumulated_from_ = std::min(accumulated_from_, first_final);
  reducer_->ready_from(first_final);
}

double Trainer::finish_gradients(double loss, bool& finite) {
  ProfileRegion r("allreduce_wait");
  const double waited_before = reducer_->wait_seconds();
  reducer_->finish();
  // An overflow in this rank's summed gradients (a shard's are its own), under loss scaling.
  bool overflow = scaler_.enabled() && kokkos_backend::count_nonfinite(model_.parameters().grads()) > 0;
  loss = agree_on_step(loss, reducer_->wait_seconds() - waited_before, overflow);
  finite = !overflow;
  return loss;
}

double Trainer::agree_on_step(double loss, double waited, bool& overflow) {
  group_.allreduce_sum(&loss, 1);
  // The rank that finished backprop last waits only for communication still in flight; the
  // others' waits also hold the time until it arrived. The stop request and the overflow
  // ride along: one collective, and every rank learns of what happened on any of them.
  std::array<double, 3> maxima{-waited, static_cast<double>(stop_signal()), overflow ? 1.0 : 0.0};
  group_.allreduce_max(maxima.data(), 3);
  overflow = maxima[2] != 0.0;
  exposed_wait_ += -maxima[0];
  if (stop_agreement_) maxima[1] = stop_agreement_->exchange(static_cast<double>(stop_signal()));
  agreed_stop_ = static_cast<int>(maxima[1]);
  return loss;
}

double peak_rss_mb() { return peak_resident_bytes() / (1024.0 * 1024.0); }

}  // namespace tessera::train
