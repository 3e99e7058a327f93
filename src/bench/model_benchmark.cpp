#include "tessera/bench/model_benchmark.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "tessera/bench/bench_config.hpp"
#include "tessera/bench/model_ops.hpp"
#include "tessera/bench/progress_bar.hpp"
#include "tessera/bench/roofline.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/statistics.hpp"
#include "tessera/registry/backend_registry.hpp"
#include "tessera/train/trainer_hook.hpp"
#include "tessera/train/training_run.hpp"

namespace tessera::bench {
namespace {

/// Records the wall time and the all-reduce wait of every step.
class StepTimer final : public train::TrainerHook {
 public:
  StepTimer(ProgressBar& progress) : progress_(progress) {}
  void on_step_start(train::Trainer& /*trainer*/, int64_t /*step*/) override { start_ = Clock::now(); }
  void on_step_end(train::Trainer& /*trainer*/, const train::StepEnd& step) override {
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start_).count());
    waits.push_back(step.allreduce_wait_s - last_wait_);
    last_wait_ = step.allreduce_wait_s;
    progress_.advance("step " + std::to_string(step.step));
  }
  std::vector<double> seconds, waits;

 private:
  using Clock = std::chrono::steady_clock;
  ProgressBar& progress_;
  Clock::time_point start_;
  double last_wait_ = 0;
};

/// The backend that runs `op` under the choice `backend` ("auto": the first that takes it),
/// or "" with the reason when none does.
std::string backend_for(const OpCase& op, const std::string& backend, std::string& why) {
  const std::vector<std::string> candidates =
      backend == "auto" ? registry::available_backends() : std::vector<std::string>{backend};
  // A layer with its own kernels runs them under any backend choice.
  if (op.runner == CaseRunner::layer) return candidates.front();
  for (const auto& name : candidates) {
    ops::Backend& b = registry::backend(name);
    std::string reason;
    bool ok = false;
    switch (op.kind) {
      case ops::OpKind::conv: ok = b.make_conv(op.conv, &reason) != nullptr; break;
      case ops::OpKind::pool: ok = b.make_pool(op.pool, &reason) != nullptr; break;
      case ops::OpKind::eltwise: ok = b.make_eltwise(op.eltwise, &reason) != nullptr; break;
      case ops::OpKind::batch_norm: ok = b.make_batch_norm(op.batch_norm, &reason) != nullptr; break;
      case ops::OpKind::inner_product: ok = b.make_inner_product(op.inner_product, &reason) != nullptr; break;
    }
    if (ok) return name;
    why += (why.empty() ? "" : "; ") + name + ": layer '" + op.layer + "': " + reason;
  }
  return "";
}

using ChosenOps = std::vector<std::pair<OpCase, std::string>>;  // each op and the backend that runs it

/// The op each layer runs, and on which backend, as the model will choose it; `why` none does
/// when one op has no backend.
std::optional<ChosenOps> choose_backends(const nlohmann::json& config, int64_t batch, const std::string& backend,
                                         std::string& why) {
  ChosenOps chosen;
  for (const OpCase& op : model_op_cases(config.at("model"), batch, config_precision(config))) {
    std::string reasons;
    const std::string b = backend_for(op, backend, reasons);
    if (b.empty()) {
      why = reasons;
      return std::nullopt;
    }
    chosen.emplace_back(op, b);
  }
  return chosen;
}

/// Adds each chosen op's measured time, split by what bounds it, and its roofline bound to `m`.
void add_op_bounds(const ChosenOps& chosen, const std::vector<OpResult>& ops, const PeakFigures& peak,
                   int64_t threads, ModelResult& m) {
  const double gbs = peak.gbs(threads);
  std::map<std::tuple<std::string, std::string>, const OpResult*> timed;  // (layer@backend, class)
  for (const OpResult& o : ops)
    if (o.timing.supported) timed[{o.timing.layer + "@" + o.timing.backend, o.timing.op_class}] = &o;
  for (const auto& [op, b] : chosen)
    for (const std::string& c : op_classes(op)) {
      const std::string data_gradient = "_backward_data";
      if (op.reads_model_input && c.size() > data_gradient.size() &&
          c.compare(c.size() - data_gradient.size(), data_gradient.size(), data_gradient) == 0)
        continue;
      auto it = timed.find({op.layer + "@" + b, c});
      if (it == timed.end())
        throw Error("the ops result has no " + c + " of layer '" + op.layer + "' on backend " + b +
                    " (run `tessera bench ops` for the same config, size and batch with that backend)");
      const OpTiming& t = it->second->timing;
      if (t.type != case_type(op))
        throw Error("the ops result timed layer '" + op.layer + "' in " + element_type_name(t.type) + "; this run " +
                    "computes it in " + element_type_name(case_type(op)) +
                    " (run `tessera bench ops` with the same training.precision or --precision)");
      const double gflops = peak.gflops(threads, t.type);
      (memory_bound(t.flops, t.bytes, gflops, gbs) ? m.memory_bound_seconds : m.compute_bound_seconds) += t.seconds;
      m.roofline_seconds += roofline_seconds(t.flops, t.bytes, gflops, gbs);
    }
}

/// Trains the model for the warm-up and timed steps and adds the median step and all-reduce
/// wait of the timed ones to `m`.
void time_steps(const nlohmann::json& config, const ModelBenchOptions& options, int64_t batch, ModelResult& m) {
  train::RunOverrides overrides;
  overrides.backend = options.backend;
  overrides.max_steps = options.warmup_steps + options.steps;
  // Enough epochs for the steps whatever the data set's size; max_steps ends the run.
  overrides.epochs = overrides.max_steps;
  overrides.progress = false;
  // No validation inside the timed steps: it would land in the step that ends an epoch.
  nlohmann::json run_config = config;
  if (run_config.contains("data") && run_config["data"].is_object() &&
      run_config["data"].contains("validation_samples"))
    run_config["data"]["validation_samples"] = 0;
  train::TrainingRun run(run_config, overrides);
  ProgressBar progress(options.progress, *overrides.max_steps);
  auto timer = std::make_unique<StepTimer>(progress);
  StepTimer* steps = timer.get();
  run.trainer().add_hook(std::move(timer));
  run.run();
  progress.finish();
  if (static_cast<int64_t>(steps->seconds.size()) < *overrides.max_steps)
    throw Error("the model ran " + std::to_string(steps->seconds.size()) + " steps of the " +
                std::to_string(*overrides.max_steps) + " asked for (stopped early)");
  const std::vector<double> timed_steps(steps->seconds.begin() + options.warmup_steps, steps->seconds.end());
  const std::vector<double> timed_waits(steps->waits.begin() + options.warmup_steps, steps->waits.end());
  m.steps = options.steps;
  m.step_seconds = median(timed_steps);
  m.samples_per_second = static_cast<double>(batch) / m.step_seconds;
  m.communication_seconds = median(timed_waits);
}

}  // namespace

ModelResult benchmark_model(const nlohmann::json& config, const ModelBenchOptions& options,
                            const std::vector<OpResult>& ops, const PeakFigures& peak, int64_t threads) {
  if (options.steps < 1) throw Error("--steps: at least 1 timed step is needed");
  if (options.warmup_steps < 0) throw Error("--warmup: expected at least 0");
  ModelResult m;
  m.backend = options.backend;
  m.platform = options.platform;
  m.precision = config_precision(config);
  const int64_t batch = config_batch(config);
  std::string why;
  const auto chosen = choose_backends(config, batch, options.backend, why);
  if (!chosen) {
    m.supported = false;
    m.why = why;
    return m;
  }
  add_op_bounds(*chosen, ops, peak, threads, m);
  time_steps(config, options, batch, m);
  m.other_seconds = m.step_seconds - m.compute_bound_seconds - m.memory_bound_seconds - m.communication_seconds;
  m.arch_efficiency = m.roofline_seconds / m.step_seconds;
  return m;
}

}  // namespace tessera::bench
