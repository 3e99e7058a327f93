#include "tessera/train/trainer.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/optim/optimizer_section.hpp"
#include "tessera/train/metrics_log.hpp"
#include "tessera/train/progress.hpp"

namespace tessera::train {
namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

Shape batch_shape(int64_t batch, const Shape& sample) {
  std::vector<int64_t> dims{batch};
  for (auto d : sample.dims()) dims.push_back(d);
  return Shape(dims);
}

std::string format(const char* fmt, double a, double b, double c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}
}  // namespace

TrainingOptions TrainingOptions::from_json(ConfigObject& cfg) {
  TrainingOptions o;
  o.epochs = cfg.integer_in("epochs", 1, 1 << 30, 1);
  o.batch_size = cfg.integer_in("batch_size", 1, 1 << 30, 8);
  o.max_steps = cfg.integer_in("max_steps", 0, int64_t{1} << 50, 0);
  o.seed = static_cast<uint64_t>(cfg.integer_in("seed", 0, int64_t{1} << 62, 0));
  o.log_every = cfg.integer_in("log_every", 1, 1 << 30, 10);
  o.allreduce_bucket_kb = cfg.integer_in("allreduce_bucket_kb", 1, 1 << 30, 4096);
  o.allreduce_progress_thread = cfg.boolean("allreduce_progress_thread", o.allreduce_progress_thread);
  if (cfg.choice("gradient_combination", {"sum", "adasum"}, "sum") == "adasum")
    o.gradient_combination = parallel::GradientCombination::adasum;
  o.check_replicas = cfg.boolean("check_replicas", o.check_replicas);
  if (cfg.has("checkpoint")) {
    auto ck = cfg.object("checkpoint");
    o.checkpoint_file = ck.string("path");
    o.checkpoint_every = ck.integer_in("every_steps", 0, int64_t{1} << 50, 0);
    ck.finish();
  }
  cfg.finish();
  return o;
}

namespace {

/// D, H, W of a per-sample input shape ([D, H, W, C], [H, W, C] or [F]).
std::array<int64_t, 3> sample_spatial_size(const Shape& sample) {
  if (sample.rank() == 4) return {sample[0], sample[1], sample[2]};
  if (sample.rank() == 3) return {1, sample[0], sample[1]};
  return {1, 1, 1};
}

}  // namespace

Trainer::Trainer(model::Model& model, layers::Loss& loss, optim::Optimizer& optimizer, io::DataSplit& data,
                 const TrainingOptions& options, const nlohmann::json& optimizer_config,
                 parallel::Communicator group)
    : model_(model), loss_(loss), optimizer_(optimizer), data_(data), options_(options), group_(group) {
  if (!data_.train) throw Error("training needs a training dataset");
  if (data_.train->sample_shape() != model_.sample_shape())
    throw ConfigError("$.data", "samples have shape " + data_.train->sample_shape().str() +
                                    " (D, H, W, C) but the model input is " + model_.sample_shape().str());
  const Shape out = model_.output_shape(1);
  const Shape want_target = loss_.target_shape(out);
  const Shape have_target = batch_shape(1, data_.train->target_shape());
  if (want_target.numel() != have_target.numel())
    throw ConfigError("$.loss", "loss '" + loss_.type() + "' on model output " + out.str() + " needs targets " +
                                    want_target.str() + " per sample, the data provides " + have_target.str());
  // Found out now, not after hours of training when the first checkpoint is written.
  if (!options_.checkpoint_file.empty()) require_writable_location(options_.checkpoint_file, "checkpoints");
  steps_per_epoch_ = data_.train->size() / options_.batch_size;
  if (steps_per_epoch_ == 0)
    throw ConfigError("$.training.batch_size", "batch size " + std::to_string(options_.batch_size) + " exceeds the " +
                                                   std::to_string(data_.train->size()) + " training samples");
  const int64_t multiple = model_.batch_multiple();
  if (options_.batch_size % multiple != 0)
    throw ConfigError("$.training.batch_size", "the global batch of " + std::to_string(options_.batch_size) +
                                                   " samples does not divide over the model's sample groups; use a "
                                                   "multiple of " + std::to_string(multiple));
  // Inputs and targets are read for this rank's block under the input distribution; the loss
  // sees its block of the targets under the output distribution.
  const parallel::ProcessGrid& in_grid = model_.input_grid();
  const parallel::ProcessGrid& out_grid = model_.output_grid();
  local_batch_ = in_grid.local_batch(options_.batch_size, "model input");
  box_ = in_grid.local_box(sample_spatial_size(model_.sample_shape()), "model input");
  const bool voxel_targets = have_target.rank() > 2 || out.rank() > 2;
  if (!(in_grid.distribution() == out_grid.distribution())) {
    if (voxel_targets)
      throw ConfigError("$.model.layers", "the model output " + out.str() + " has per-voxel targets but its distribution " +
                                              out_grid.distribution().str() + " differs from the input's " +
                                              in_grid.distribution().str() + "; give the last layer the input's distribution");
    if (out_grid.distribution().sample % in_grid.distribution().sample != 0)
      throw ConfigError("$.model.layers", "the last layer's distribution " + out_grid.distribution().str() +
                                              " splits the batch into fewer sample groups than the input's " +
                                              in_grid.distribution().str() + "; its targets would live on other ranks");
  }
  if (options_.gradient_combination == parallel::GradientCombination::adasum && model_.has_spatial_split())
    throw ConfigError("$.training.gradient_combination",
                      "adasum combines whole-sample gradients of sample groups; this model splits samples in space");
  if (group_.rank() != 0) options_.metrics_file.clear();  // one log, one checkpoint, one console
  optimizer_.bind(model_.parameters().values(), model_.parameters().grads());
  if (options_.gradient_combination == parallel::GradientCombination::adasum) {
    // Adasum combines each parameter tensor on its own.
    reducer_ = std::make_unique<parallel::GradientReducer>(
        model_.parameters().grads(),
        parallel::Adasum(group_, model_.parameters().trainable_offsets(), "$.training.gradient_combination"));
  } else {
    reducer_ = std::make_unique<parallel::GradientReducer>(
        group_, model_.parameters().grads(), model_.parameters().trainable_offsets(),
        options_.allreduce_bucket_kb * 1024 / 4, options_.allreduce_progress_thread);
  }
  const int64_t total = options_.epochs * steps_per_epoch_;
  const optim::OptimizerSection section(optimizer_config);
  lr_factor_ = section.lr_factor(options_.batch_size);
  schedule_ = section.make_schedule(optimizer_.base_lr(), total);
  inputs_ = Tensor(local_input_shape(local_batch_), "tessera::batch_inputs");
  targets_ = Tensor(local_target_shape(local_batch_, data_.train->target_shape()), "tessera::batch_targets");
  grad_ = Tensor(out_grid.local_shape(model_.output_shape(options_.batch_size), "model output"), "tessera::loss_grad");
  sample_parts_ = out_grid.spatial().size();
  if (data_.validation) {
    validation_samples_ = data_.validation->size() / multiple * multiple;
    if (validation_samples_ < data_.validation->size())
      log::warn("validation uses " + std::to_string(validation_samples_) + " of its " +
                std::to_string(data_.validation->size()) + " samples: batches must split over " +
                std::to_string(multiple) + " sample groups");
  }
}

Shape Trainer::local_input_shape(int64_t rows) const {
  std::vector<int64_t> dims{rows};
  const Shape& sample = model_.sample_shape();
  const int spatial = sample.rank() - 1;  // 3 for [D, H, W, C], 2 for [H, W, C], 0 for [F]
  for (int k = 0; k < spatial; ++k) dims.push_back(box_.extent[static_cast<size_t>(3 - spatial + k)]);
  dims.push_back(sample[sample.rank() - 1]);
  return Shape(dims);
}

Shape Trainer::local_target_shape(int64_t rows, const Shape& per_sample) const {
  // Per-voxel targets ([D, H, W] or [D, H, W, 1]) are cut by the same box as the inputs.
  std::vector<int64_t> dims{rows};
  const int spatial = model_.sample_shape().rank() - 1;
  const bool voxel = spatial >= 2 && per_sample.rank() >= spatial;
  for (int k = 0; k < per_sample.rank(); ++k)
    dims.push_back(voxel && k < spatial ? box_.extent[static_cast<size_t>(3 - spatial + k)] : per_sample[k]);
  return Shape(dims);
}

Tensor Trainer::loss_targets(const Tensor& targets, const Tensor& prediction, int64_t global_rows) const {
  const parallel::ProcessGrid& in_grid = model_.input_grid();
  const parallel::ProcessGrid& out_grid = model_.output_grid();
  const Shape wanted = loss_.target_shape(prediction.shape());
  if (in_grid.distribution() == out_grid.distribution()) return targets.reshaped(wanted);
  // Per-sample targets of the output's sample groups: a run of the rows read for the input's
  // (larger) sample groups, since ranks are numbered with samples slowest.
  const int64_t offset = out_grid.first_sample(global_rows, "model output") -
                         in_grid.first_sample(global_rows, "model input");
  const int64_t per_row = targets.numel() / std::max<int64_t>(targets.shape()[0], 1);
  return targets.slice(offset * per_row, wanted);
}

std::vector<int64_t> Trainer::epoch_order(int64_t epoch) const {
  std::vector<int64_t> order(static_cast<size_t>(data_.train->size()));
  std::iota(order.begin(), order.end(), 0);
  // Fisher–Yates from the counter-based generator: the order depends on (seed, epoch) only.
  const uint64_t stream = 0x73687566666c65ull ^ static_cast<uint64_t>(epoch);
  for (size_t i = order.size(); i > 1; --i) {
    const uint64_t j = rng::bits(options_.seed, stream, i) % i;
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

Trainer::Validation Trainer::validate() {
  Validation v;
  auto& ds = *data_.validation;
  const int64_t n = validation_samples_, b = options_.batch_size;
  const parallel::ProcessGrid& in_grid = model_.input_grid();
  double loss_sum = 0.0;
  int64_t correct = 0, predictions = 0;
  // Target moments give the predict-the-mean baseline of a regression on per-sample targets;
  // unused otherwise. A spatial group holds copies of its samples' targets: one rank counts them.
  const bool regression = loss_.type() == "mse" && model_.output_shape(1).rank() == 2;
  const bool counts_targets = model_.output_grid().spatial().rank() == 0;
  const size_t moments = regression ? static_cast<size_t>(ds.target_shape().numel()) : 0;
  std::vector<double> target_sum(moments, 0.0), target_sq(moments, 0.0);
  Tensor inputs, targets, no_grad;
  // Global batches in order, each rank taking its block, as in training.
  for (int64_t start = 0; start < n; start += b) {
    const int64_t global_rows = std::min(b, n - start);
    const int64_t rows = in_grid.local_batch(global_rows, "validation");
    const int64_t first = start + in_grid.first_sample(global_rows, "validation");
    std::vector<int64_t> idx(static_cast<size_t>(rows));
    std::iota(idx.begin(), idx.end(), first);
    ensure_shape(inputs, local_input_shape(rows), "tessera::val_inputs");
    ensure_shape(targets, local_target_shape(rows, ds.target_shape()), "tessera::val_targets");
    ds.load(idx, box_, inputs, targets);
    if (start + b < n) {  // the next batch is read while this one is evaluated
      const int64_t next_rows = std::min(b, n - start - b);
      std::vector<int64_t> next(static_cast<size_t>(in_grid.local_batch(next_rows, "validation")));
      std::iota(next.begin(), next.end(), start + b + in_grid.first_sample(next_rows, "validation"));
      ds.prefetch(next, box_);
    }
    const Tensor& out = model_.forward(inputs, {layers::Mode::inference, 0, global_rows});
    const Tensor mine = loss_targets(targets, out, global_rows);
    const auto sums = loss_.evaluate(out, mine, n, no_grad, sample_parts_);
    loss_sum += sums.loss_sum;
    correct += sums.correct;
    predictions += sums.predictions;
    if (regression && counts_targets) {
      const auto t = mine.to_host();
      const size_t per = target_sum.size();
      for (size_t i = 0; i < t.size(); ++i) {
        target_sum[i % per] += t[i];
        target_sq[i % per] += static_cast<double>(t[i]) * t[i];
      }
    }
  }
  group_.allreduce_sum(&loss_sum, 1);
  std::array<int64_t, 2> counts{correct, predictions};
  group_.allreduce_sum(counts.data(), 2);
  correct = counts[0];
  predictions = counts[1];
  group_.allreduce_sum(target_sum.data(), static_cast<int64_t>(target_sum.size()));
  group_.allreduce_sum(target_sq.data(), static_cast<int64_t>(target_sq.size()));
  v.loss = loss_sum / static_cast<double>(n);
  if (regression) {
    // MSE of always predicting the validation set's mean target: the bar a model must beat.
    double baseline = 0.0;
    for (size_t k = 0; k < target_sum.size(); ++k) {
      const double mean = target_sum[k] / static_cast<double>(n);
      baseline += target_sq[k] / static_cast<double>(n) - mean * mean;
    }
    v.baseline = baseline / static_cast<double>(target_sum.size());
  }
  if (predictions > 0) v.accuracy = static_cast<double>(correct) / static_cast<double>(predictions);
  return v;
}

TrainingReport Trainer::run() {
  TrainingReport report;
  MetricsLog metrics(options_.metrics_file);
  ProgressReporter progress(options_.progress && group_.rank() == 0, options_.log_every);
  int64_t step = 0;
  if (!options_.resume_file.empty()) {
    const auto restored = load_checkpoint(options_.resume_file, model_.parameters(), optimizer_);
    if (restored.seed != options_.seed)
      log::warn("checkpoint was written with seed " + std::to_string(restored.seed) + ", this run uses " +
                std::to_string(options_.seed) + ": the data order will differ from the original run");
    step = restored.step;
    log::info("resumed from " + options_.resume_file + " at step " + std::to_string(step));
  }
  const int64_t total_steps = options_.epochs * steps_per_epoch_;
  const int64_t last_step = options_.max_steps > 0 ? std::min(options_.max_steps, total_steps) : total_steps;
  metrics.write({{"event", "start"},
                 {"dataset", data_.train->describe()},
                 {"batch_size", options_.batch_size},
                 {"steps_per_epoch", steps_per_epoch_},
                 {"total_steps", last_step},
                 {"start_step", step},
                 {"optimizer", optimizer_.str()},
                 {"schedule", schedule_->str()},
                 {"lr_factor", lr_factor_},
                 {"threads", ExecSpace().concurrency()}});

  // The first steps build backend primitives and first-touch buffers; like the benchmark
  // protocol, the profile leaves two warm-up steps out when there are enough steps.
  const int64_t first_profiled = last_step - step > 2 ? step + 2 : step;
  Profiler::instance().reset();
  Profiler::instance().enable(options_.profile && step == first_profiled);
  auto profile_start = Clock::now();
  const auto run_start = Clock::now();
  auto window_start = Clock::now();
  double window_loss = 0.0;
  double exposed_wait = 0.0;  // all-reduce seconds no rank could hide (see the step)
  int64_t window_steps = 0, trained_samples = 0;
  const int64_t b = options_.batch_size;
  std::vector<int64_t> order;
  int64_t order_epoch = -1;

  while (step < last_step) {
    const int64_t epoch = step / steps_per_epoch_, in_epoch = step % steps_per_epoch_;
    if (epoch != order_epoch) {
      order = epoch_order(epoch);
      order_epoch = epoch;
    }
    if (options_.profile && step == first_profiled && !Profiler::instance().enabled()) {
      Profiler::instance().enable(true);
      profile_start = Clock::now();
    }
    // This rank's contiguous slice of the global mini-batch (and its box of each sample).
    const int64_t first = in_epoch * b + model_.input_grid().first_sample(b, "model input");
    std::vector<int64_t> idx(order.begin() + first, order.begin() + first + local_batch_);
    const layers::StepInfo info{layers::Mode::training, step, b};
    const float lr = static_cast<float>(lr_factor_ * schedule_->lr(step));
    double loss_value;
    {
      ProfileRegion region("step");
      {
        ProfileRegion r("data");
        data_.train->load(idx, box_, inputs_, targets_);
        if (step + 1 < last_step) {  // the next step's samples are read while this one trains
          const int64_t next_epoch = (step + 1) / steps_per_epoch_;
          const std::vector<int64_t> later = next_epoch == epoch ? std::vector<int64_t>() : epoch_order(next_epoch);
          const auto& next_order = next_epoch == epoch ? order : later;
          const int64_t next = ((step + 1) % steps_per_epoch_) * b + model_.input_grid().first_sample(b, "model input");
          data_.train->prefetch(std::vector<int64_t>(next_order.begin() + next, next_order.begin() + next + local_batch_), box_);
        }
      }
      const Tensor& out = model_.forward(inputs_, info);
      {
        ProfileRegion r("loss");
        loss_value = loss_.evaluate(out, loss_targets(targets_, out, b), b, grad_, sample_parts_).loss_sum;
      }
      // Each rank's gradient is already divided by the global batch, so the sum over ranks is
      // the gradient of the mean loss over the whole mini-batch. Buckets are reduced while
      // backprop goes on; finish() waits for what is still in flight.
      model_.backward(grad_, info, [this](int64_t first_final) { reducer_->ready_from(first_final); });
      {
        ProfileRegion r("allreduce_wait");
        const double waited_before = reducer_->wait_seconds();
        reducer_->finish();
        group_.allreduce_sum(&loss_value, 1);
        // The rank that finished backprop last waits only for communication still in flight;
        // the others' waits also hold the time until it arrived.
        double minus_exposed = waited_before - reducer_->wait_seconds();
        group_.allreduce_max(&minus_exposed, 1);
        exposed_wait += -minus_exposed;
      }
      loss_value /= static_cast<double>(b);
      ProfileRegion r("optimizer");
      optimizer_.step(lr);
      if (options_.check_replicas) check_replicas(group_, model_.parameters(), step + 1);
    }
    if (!std::isfinite(loss_value))
      throw Error("training diverged: the loss is " + std::to_string(loss_value) + " at step " + std::to_string(step) +
                  " (try a lower learning rate)");
    ++step;
    trained_samples += b;
    report.step_losses.push_back(loss_value);
    window_loss += loss_value;
    ++window_steps;

    const bool epoch_end = step % steps_per_epoch_ == 0;
    if (step % options_.log_every == 0 || epoch_end || step == last_step) {
      const double elapsed = seconds_since(window_start);
      const double mean = window_loss / static_cast<double>(window_steps);
      const double rate = static_cast<double>(window_steps * b) / std::max(elapsed, 1e-9);
      report.logged_losses.push_back(mean);
      metrics.write({{"event", "train"},
                     {"step", step},
                     {"epoch", epoch},
                     {"loss", mean},
                     {"allreduce_wait_s", reducer_->wait_seconds()},  // cumulative, this rank
                     {"allreduce_exposed_s", exposed_wait},           // cumulative, the last rank's
                     {"lr", lr},
                     {"samples_per_s", rate},
                     {"elapsed_s", seconds_since(run_start)}});
      progress.step(epoch, options_.epochs, step - epoch * steps_per_epoch_, steps_per_epoch_, step,
                    format("loss %.4f  lr %.2e  %.1f samples/s", mean, lr, rate));
      window_loss = 0.0;
      window_steps = 0;
      window_start = Clock::now();
    }
    if (!options_.checkpoint_file.empty() && group_.rank() == 0 && options_.checkpoint_every > 0 &&
        step % options_.checkpoint_every == 0)
      save_checkpoint(options_.checkpoint_file, model_.parameters(), optimizer_, {step, options_.seed});
    if ((epoch_end || step == last_step) && data_.validation) {
      const auto v = validate();
      report.validation_loss = v.loss;
      report.validation_baseline = v.baseline;
      report.validation_accuracy = v.accuracy;
      progress.finish_line();
      std::string line = "epoch " + std::to_string(epoch + 1) + ": validation loss " + format("%.4f", v.loss, 0, 0);
      if (v.baseline >= 0)
        line += format(" (predicting the mean: %.4f, ratio %.3f)", v.baseline, v.loss / std::max(v.baseline, 1e-12), 0);
      if (v.accuracy >= 0) line += format(", accuracy %.2f%%", 100.0 * v.accuracy, 0, 0);
      log::info(line);
      nlohmann::json rec{{"event", "validation"}, {"step", step}, {"epoch", epoch}, {"loss", v.loss}};
      if (v.baseline >= 0) rec["baseline_loss"] = v.baseline;
      if (v.accuracy >= 0) rec["accuracy"] = v.accuracy;
      metrics.write(rec);
    }
  }
  progress.finish_line();
  const double total_time = seconds_since(run_start);
  if (!options_.checkpoint_file.empty() && group_.rank() == 0)
    save_checkpoint(options_.checkpoint_file, model_.parameters(), optimizer_, {step, options_.seed});
  report.steps = step;
  double max_peak_rss = peak_rss_mb();  // the largest rank's, for memory-per-rank reports
  group_.allreduce_max(&max_peak_rss, 1);
  report.peak_rss_mb_max_rank = max_peak_rss;
  report.samples_per_second = static_cast<double>(trained_samples) / std::max(total_time, 1e-9);
  metrics.write({{"event", "end"},
                 {"steps", step},
                 {"elapsed_s", total_time},
                 {"ranks", group_.size()},
                 {"allreduce_wait_s", reducer_->wait_seconds()},
                 {"samples_per_s", report.samples_per_second},
                 {"peak_rss_mb", peak_rss_mb()},
                 {"peak_rss_mb_max_rank", max_peak_rss}});
  if (options_.profile) {
    const double profiled = seconds_since(profile_start);
    log::info("profile of steps " + std::to_string(first_profiled + 1) + "-" + std::to_string(step) + " (" +
              format("%.3f s", profiled, 0, 0) + ", validation included; warm-up steps left out):\n" +
              Profiler::instance().report(profiled));
    nlohmann::json regions = nlohmann::json::object();
    for (const auto& [name, entry] : Profiler::instance().entries())
      regions[name] = {{"seconds", entry.seconds}, {"calls", entry.calls}};
    metrics.write({{"event", "profile"}, {"first_step", first_profiled + 1}, {"last_step", step},
                   {"seconds", profiled}, {"regions", regions}});
    Profiler::instance().enable(false);
  }
  return report;
}

double peak_rss_mb() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace tessera::train
