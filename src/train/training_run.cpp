#include "tessera/train/training_run.hpp"

#include <algorithm>
#include <optional>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/io/dataset_slice.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/memory_check.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/model/passes/passes.hpp"
#include "tessera/optim/optimizer_section.hpp"
#include "tessera/registry/cudnn_settings.hpp"
#include "tessera/train/auto_layout.hpp"
#include "tessera/train/checkpoint_rotation.hpp"
#include "tessera/train/layout_plan_hook.hpp"

namespace tessera::train {

namespace {

/// The "local_learning" section's epochs (0 without one).
int64_t local_learning_epochs(ConfigObject& root) {
  if (!root.has("local_learning")) return 0;
  auto local = root.object("local_learning");
  const int64_t epochs = local.integer_in("epochs", 0, 1 << 30);
  local.finish();
  return epochs;
}

/// --resume auto, a batch job's way to go on after a requeue without editing its script: from
/// the newest complete checkpoint of the run's own checkpoint file, or from the start when there
/// is none yet. A resumed run writes its metrics beside the first part's (".from-step-N"), as
/// the resume command a stopped run prints does, so no part's log is overwritten.
void resume_from_newest_checkpoint(TrainingOptions& options, const RunOverrides& o) {
  if (options.checkpoint_file.empty())
    throw ConfigError("--resume", "auto resumes from the run's own checkpoints: add --checkpoint FILE (or "
                                  "training.checkpoint.path)");
  options.keep_previous_checkpoint = true;
  const auto point = agree_on_resume_point(options.checkpoint_file, o.group);
  if (!point) {
    log::info("--resume auto: no checkpoint at " + options.checkpoint_file + " yet: starting from step 0");
    return;
  }
  options.resume_file = point->file;
  if (!options.metrics_file.empty() && point->step > 0) {
    options.metrics_file = log_beside(options.metrics_file, ".from-step-" + std::to_string(point->step));
    log::info("--resume auto: metrics of this part go to " + options.metrics_file);
  }
}

}  // namespace

TrainingRun::TrainingRun(const nlohmann::json& config, const RunOverrides& o) : config_(config) {
  ConfigObject root(config_, "$");
  root.string("name", "");
  root.string("description", "");

  // A ConfigObject refers to its JSON, so the empty section must outlive `training`.
  const nlohmann::json no_training = nlohmann::json::object();
  auto training = root.has("training") ? root.object("training") : ConfigObject(no_training, "$.training");
  options_ = training_options(training, o);
  options_.local_learning_epochs = local_learning_epochs(root);
  // Before any op is made (the plan of an "auto" layout makes some): each reads them then.
  apply_cudnn_settings(root, o);

  build_model(root, o);

  auto loss_cfg = root.object("loss");
  loss_ = layers::Loss::from_json(loss_cfg);
  loss_cfg.finish();

  // The schedule and the rate scaling sit inside "optimizer" in the file but are read by the
  // trainer, which knows the total number of steps and the global batch.
  optimizer_config_ = root.has("optimizer") ? root.raw().at("optimizer") : nlohmann::json::object();
  root.object("optimizer");  // marks the key as read; the object itself is validated below
  optimizer_ = optim::OptimizerSection(optimizer_config_).make_optimizer();

  if (o.extension) {
    const std::string key = o.extension->section();
    std::optional<ConfigObject> section;
    if (root.has(key)) section.emplace(root.object(key));
    o.extension->configure(section ? &*section : nullptr);
  }
  auto data_cfg = root.object("data");
  data_ = o.extension ? o.extension->make_datasets(data_cfg, options_, *model_)
                      : io::make_datasets(data_cfg, options_.seed);
  root.finish();
  if (o.held_out_samples > 0) hold_out(o.held_out_samples, o.held_out_key);

  trainer_ = std::make_unique<Trainer>(*model_, *loss_, *optimizer_, data_, options_, optimizer_config_, o.group);
  if (o.extension)
    if (auto source = o.extension->training_source(*trainer_)) trainer_->set_training_source(std::move(source));
  if (plan_ && plan_->ranks > 1) trainer_->add_hook(std::make_unique<LayoutPlanHook>(plan::plan_json(*plan_)));
}

void TrainingRun::build_model(ConfigObject& root, const RunOverrides& o) {
  model::BuildOptions build;
  build.backend = o.backend;
  build.seed = options_.seed;
  build.group = o.group;
  build.precision = options_.precision;
  build.precision_key = options_.precision_key;
  auto model_cfg = root.object("model");
  model::ModelSpec spec = model::ModelSpec::from_json(model_cfg);
  if (spec.distribution_auto) {
    AutoLayoutOptions auto_options;
    auto_options.batch = options_.batch_size;
    auto_options.backend = o.backend;
    auto_options.optimizer_state = optimizer_state_per_parameter(config_);
    auto_options.machine_file = o.machine_file;
    auto_options.machine_key = o.machine_key;
    auto_options.config = config_;
    auto_options.precision = options_.precision;
    auto_options.gradient_precision = options_.gradient_precision;
    auto_options.allreduce_bucket_kb = options_.allreduce_bucket_kb;
    plan_ = plan_auto_layout(spec, auto_options, o.group);
    // Nodes of different speeds in the profile: the plan's shares, unless the run chose its own.
    if (!plan_->balance.empty() && !options_.balance.given) {
      options_.balance.kind = BalanceOptions::Kind::weights;
      options_.balance.weights.assign(plan_->balance.begin(), plan_->balance.end());
      options_.balance.key = "the plan's balance (\"distribution\": \"auto\")";
    }
  }
  model::Graph graph = model::build_graph(spec, build);
  model::passes::run_all(graph);
  // Before the model allocates anything: a run that cannot fit is refused with the layer's
  // key, not ended by the allocator (or the kernel's out-of-memory killer) half-way.
  model::require_training_fits_this_machine(graph, options_.batch_size,
                                            options_.sources.batch_size, o.group);
  model_ = std::make_unique<model::Model>(std::move(graph));
}

void TrainingRun::apply_cudnn_settings(ConfigObject& root, const RunOverrides& o) const {
  if (root.has("cudnn")) root.object("cudnn");  // marks the key as read; apply_run_cudnn_settings reads it
  registry::CudnnSettings overrides;
  if (options_.tf32) overrides.tf32 = true;
  overrides.algorithms = o.cudnn_algorithms;
  overrides.deterministic = o.cudnn_deterministic;
  const std::string note = registry::apply_run_cudnn_settings(config_, overrides);
  if (!note.empty() && o.group.rank() == 0) log::info("note: " + note);
}

double TrainingRun::optimizer_state_per_parameter(const nlohmann::json& config) {
  if (!config.contains("optimizer")) return 0;
  // Asked of the optimizer itself: bound to one element, how many it keeps beside it.
  auto probe = optim::OptimizerSection(config.at("optimizer")).make_optimizer();
  Tensor value(Shape{1}, "probe"), grad(Shape{1}, "probe_grad");
  probe->bind(value, grad);
  double state = 0;
  for (auto& [name, t] : probe->state()) state += static_cast<double>(t.numel());
  return state;
}

std::string RunOverrides::flag_name(const std::string& flag) const {
  if (!keyword_names || flag.rfind("--", 0) != 0) return flag;
  std::string keyword = flag.substr(2);
  std::replace(keyword.begin(), keyword.end(), '-', '_');
  return keyword;
}

TrainingOptions TrainingRun::training_options(ConfigObject& training, const RunOverrides& o) {
  TrainingOptions options = TrainingOptions::from_json(training);
  // Each override is checked against the bounds of the key it replaces, naming the flag (or,
  // from Python, the keyword argument).
  using L = TrainingLimits;
  const auto flag = [&o](const std::string& name) { return o.flag_name(name); };
  auto take = [](std::optional<int64_t> flag, const IntegerBounds& bounds, const std::string& name, int64_t& value,
                 std::string* source) {
    if (!flag) return;
    check_integer(*flag, bounds, name);
    value = *flag;
    if (source != nullptr) *source = name;
  };
  take(o.epochs, L::epochs, flag("--epochs"), options.epochs, &options.sources.epochs);
  take(o.batch_size, L::batch_size, flag("--batch-size"), options.batch_size, &options.sources.batch_size);
  take(o.accumulate, L::accumulate, flag("--accumulate"), options.accumulate, &options.sources.accumulate);
  take(o.max_steps, L::max_steps, flag("--max-steps"), options.max_steps, &options.sources.max_steps);
  take(o.checkpoint_every, L::checkpoint_every, flag("--checkpoint-every"), options.checkpoint_every, nullptr);
  if (o.seed) {
    if (*o.seed > static_cast<uint64_t>(L::seed.max))
      throw ConfigError(flag("--seed"), "expected " + L::seed.text() + ", got " + std::to_string(*o.seed));
    options.seed = *o.seed;
  }
  if (!o.checkpoint_file.empty()) options.checkpoint_file = o.checkpoint_file;
  if (o.precision) {
    const model::RunPrecision p = model::parse_run_precision(*o.precision, flag("--precision"));
    options.tf32 = p.tf32;
    options.precision = p.type;
    options.precision_key = flag("--precision");
  }
  if (o.balance) options.balance = BalanceOptions::from_flag(*o.balance);
  options.metrics_file = o.metrics_file;
  // Before anything is built or read: a run refused at its end for a path loses its work.
  if (!o.metrics_file.empty()) require_writable_location(o.metrics_file, flag("--metrics") + " (the metrics log)");
  if (!options.checkpoint_file.empty())
    require_writable_location(options.checkpoint_file, o.checkpoint_file.empty()
                                                           ? "$.training.checkpoint.path (checkpoints)"
                                                           : "--checkpoint (checkpoints)");
  if (o.resume_file == "auto")
    resume_from_newest_checkpoint(options, o);
  else
    options.resume_file = o.resume_file;
  options.progress = o.progress;
  options.profile = o.profile;
  if (o.checkpoint_every && *o.checkpoint_every > 0 && options.checkpoint_file.empty())
    throw ConfigError("--checkpoint-every",
                      "needs a checkpoint file: add --checkpoint FILE (or training.checkpoint.path)");
  return options;
}

void TrainingRun::hold_out(int64_t samples, const std::string& key) {
  const int64_t n = data_.train->size();
  if (samples > n - options_.batch_size)
    throw ConfigError(key, "holding out " + std::to_string(samples) + " of the " + std::to_string(n) +
                               " training samples leaves fewer than one batch of " +
                               std::to_string(options_.batch_size) + " to train on");
  const std::shared_ptr<io::Dataset> all(std::move(data_.train));
  data_.train = std::make_unique<io::DatasetSlice>(all, 0, n - samples, key);
  held_out_ = std::make_shared<io::DatasetSlice>(all, n - samples, samples, key);
}

namespace {

/// "gradients: ..." for a run over several ranks: the type the sums travel in and the bytes a
/// step sends out of each rank (a ring's share, 2(P − 1)/P of each tensor, P the ranks that
/// hold it); empty on one rank.
std::string gradient_line(const model::Model& m, const TrainingOptions& o, const parallel::Communicator& world) {
  if (world.is_serial()) return "";
  if (o.gradient_combination == parallel::GradientCombination::adasum) return "gradients: combined by Adasum in fp32\n";
  double bytes = 0, sharded = 0;
  for (const auto& p : m.parameters().all()) {
    if (!p->trainable) continue;
    const double ranks = p->shard.split() ? p->shard.replicas.size() : world.size();
    bytes += 2.0 * (ranks - 1.0) / ranks * static_cast<double>(p->grad.numel());
    // A sharded weight: the rest of its block gathered, and its gradient reduce-scattered.
    if (!p->shard.run_count.empty())
      sharded +=
          2.0 * static_cast<double>(p->shard.member_block_shape(p->shard.index, p->name).numel() - p->grad.numel());
  }
  const double mib = bytes * static_cast<double>(element_size(o.gradient_precision)) / (1 << 20);
  const std::string type = element_type_name(o.gradient_precision);
  std::string s = "gradients: summed in " + type + ", " + fixed(mib, 2) + " MiB a step out of each rank";
  if (o.gradient_precision != ElementType::fp32)
    s += " (fp32: " + fixed(bytes * 4.0 / (1 << 20), 2) + "; each rank's values rounded to " + type + " once)";
  if (sharded > 0)
    s += "; sharded weights: " + fixed(sharded * 4.0 / (1 << 20), 2) +
         " MiB gathered and reduce-scattered in fp32 out of each rank";
  return s + "\n";
}

/// "batch shares: 4/3 of 7 over 2 sample groups (...)" where the batch does not split into
/// equal shares or a balance is set; empty otherwise.
std::string shares_line(const Trainer& t) {
  const BalanceOptions& b = t.options().balance;
  const std::vector<int64_t> rows = t.plan().slice_rows(t.options().batch_size);
  const bool equal = std::all_of(rows.begin(), rows.end(), [&](int64_t r) { return r == rows.front(); });
  if (equal && b.kind == BalanceOptions::Kind::even) return "";
  const char* why = b.kind == BalanceOptions::Kind::weights ? "by the weights of " : "";
  return "batch shares: " + parallel::shares_text(rows) + " of " + std::to_string(t.options().batch_size) + " over " +
         std::to_string(rows.size()) + " sample groups (" + why +
         (b.kind == BalanceOptions::Kind::measured  ? "even until measured after the first steps, then in proportion "
                                                      "to measured speed, checked each epoch"
          : b.kind == BalanceOptions::Kind::weights ? b.key
                                                    : "as even as the batch allows") +
         ")\n";
}

}  // namespace

std::string TrainingRun::describe() const {
  std::string s = "data:      " + data_.train->describe() + "\n";
  if (data_.validation) s += "validation: " + data_.validation->describe() + "\n";
  s += "optimizer: " + optimizer_->str() + "\n";
  s += "training:  " + std::to_string(options_.epochs) + " epoch(s) of " + std::to_string(trainer_->steps_per_epoch()) +
       " steps, batch " + std::to_string(options_.batch_size) +
       (options_.accumulate > 1 ? " x " + std::to_string(options_.accumulate) +
                                      " accumulated = " + std::to_string(trainer_->update_batch()) + " per step"
                                : "") +
       ", seed " + std::to_string(options_.seed) + "\n";
  if (options_.local_learning_epochs > 0)
    s += "local learning: the first " + std::to_string(options_.local_learning_epochs) +
         " epoch(s) train the layers with a local rule (" + trainer_->local_learning_layers() +
         ") and nothing else; the epochs after them train the other layers by gradients, those fixed\n";
  s += "precision: " + model_->precision_summary() +
       (options_.tf32 ? " with TF32 products in cuDNN's convolutions" : "") + ", parameters and optimizer state fp32\n";
  s += gradient_line(*model_, options_, parallel::Communicator::world());
  s += shares_line(*trainer_);
  if (trainer_->loss_scaler().enabled()) s += "loss scaling: " + trainer_->loss_scaler().describe() + "\n";
  s += "threads:   " + std::to_string(ExecSpace().concurrency()) + " (" + ExecSpace::name() + ") per rank, " +
       std::to_string(parallel::Communicator::world().size()) + " rank(s)\n";
  if (plan_ && plan_->ranks > 1)
    s += "layout:    planned (\"distribution\": \"auto\")\n" + plan::plan_table(*plan_);
  else if (plan_)
    s += "layout:    one rank (\"distribution\": \"auto\")\n";
  return s;
}

}  // namespace tessera::train
