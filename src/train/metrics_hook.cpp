#include "tessera/train/metrics_hook.hpp"

#include "tessera/core/stop_request.hpp"
#include "tessera/parallel/batch_job.hpp"
#include "tessera/parallel/rank_placement.hpp"
#include "tessera/parallel/traffic_counter.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::train {
namespace {

/// What this rank holds of the model's parameters, and of those split over channel groups
/// (elements; optimizer state counted apart), beside the whole model's.
nlohmann::json parameter_record(const model::ParameterStore& params, optim::Optimizer& optimizer) {
  int64_t whole = 0, shards = 0, shards_whole = 0;
  for (const auto& p : params.all()) {
    if (!p->trainable) continue;
    whole += p->shard.split() ? p->shard.whole.numel() : p->shape.numel();
    if (p->shard.split()) {
      shards += p->shape.numel();
      shards_whole += p->shard.whole.numel();
    }
  }
  int64_t state = 0;
  for (auto& [name, t] : optimizer.state()) state += t.numel();
  return {{"trainable_per_rank", params.trainable_count()},
          {"trainable_whole", whole},
          {"sharded_per_rank", shards},
          {"sharded_whole", shards_whole},
          {"optimizer_state_per_rank", state}};
}

/// Every layer as the run header shows it: what `tessera report` draws the layout from.
nlohmann::json layers_record(const model::Model& model) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& r : model.layer_rows()) {
    const std::vector<int64_t> dims = r.output.dims();
    nlohmann::json layer{{"name", r.name},
                         {"type", r.type},
                         {"output_per_sample", std::vector<int64_t>(dims.begin() + 1, dims.end())},
                         {"parameters", r.parameters},
                         {"backend", r.backend},
                         {"precision", r.precision}};
    if (!r.distribution.empty()) layer["distribution"] = r.distribution;
    layers.push_back(std::move(layer));
  }
  return layers;
}

/// Where each rank of the trainer runs. Collective over the trainer's ranks.
nlohmann::json placement_record(const parallel::Communicator& group) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& p : parallel::gather_rank_placements(group))
    ranks.push_back({{"rank", p.rank}, {"node", p.node}, {"host", p.host}, {"cpus", p.cpus}, {"numa", p.numa}});
  return ranks;
}

/// The log's first record: what the run trains on and how, its layers and where its ranks run.
/// Collective over the trainer's ranks (the placement).
nlohmann::json start_record(Trainer& trainer, const RunStart& start) {
  nlohmann::json record = {{"event", "start"},
          {"dataset", trainer.data().train->describe()},
          {"batch_size", trainer.options().batch_size},
          {"accumulate", trainer.options().accumulate},
          {"steps_per_epoch", trainer.steps_per_epoch()},
          {"total_steps", start.last_step},
          {"start_step", start.start_step},
          {"optimizer", trainer.optimizer().str()},
          {"schedule", trainer.schedule().str()},
          {"lr_factor", trainer.lr_factor()},
          {"threads", ExecSpace().concurrency()},
          {"precision", element_type_name(trainer.options().precision)},
          {"parameters", parameter_record(trainer.model().parameters(), trainer.optimizer())},
          {"ranks", trainer.group().size()},
          {"layers", layers_record(trainer.model())},
          {"placement", placement_record(trainer.group())}};
  if (const auto job = parallel::BatchJob::from_environment()) record["job"] = job->to_json();
  return record;
}

}  // namespace

void MetricsHook::on_run_start(Trainer& trainer, const RunStart& start) {
  if (trainer.logs_metrics()) trainer.metrics().write(start_record(trainer, start));
  for (int k = 0; k < parallel::TrafficCounter::kinds; ++k)
    sent_at_start_[static_cast<size_t>(k)] =
        parallel::TrafficCounter::bytes(static_cast<parallel::TrafficCounter::Kind>(k));
  run_start_ = std::chrono::steady_clock::now();
}

void MetricsHook::on_step_end(Trainer& trainer, const StepEnd& step) {
  if (!step.window_end) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count();
  nlohmann::json record{{"event", "train"},
                        {"step", step.step},
                        {"epoch", step.epoch},
                        {"loss", step.window_loss},
                        {"allreduce_wait_s", step.allreduce_wait_s},
                        {"allreduce_exposed_s", step.allreduce_exposed_s},
                        {"lr", step.lr},
                        {"samples_per_s", step.window_samples_per_s},
                        {"elapsed_s", elapsed}};
  const LossScaler& scaler = trainer.loss_scaler();
  if (scaler.enabled()) {
    record["loss_scale"] = scaler.scale();
    record["skipped_steps"] = scaler.skipped();
  }
  trainer.metrics().write(record);
}

void MetricsHook::on_run_end(Trainer& trainer, const RunEnd& end) {
  const TrainingReport& report = trainer.report();
  nlohmann::json record{{"event", "end"},
                        {"steps", end.steps},
                        {"elapsed_s", end.elapsed_s},
                        {"ranks", trainer.group().size()},
                        {"allreduce_wait_s", trainer.allreduce_wait_seconds()},
                        {"samples_per_s", report.samples_per_second},
                        {"peak_rss_mb", peak_rss_mb()},
                        {"precision", element_type_name(trainer.options().precision)},
                        {"activation_mb", static_cast<double>(trainer.model().activation_bytes()) / (1 << 20)},
                        {"peak_rss_mb_max_rank", report.peak_rss_mb_max_rank}};
  nlohmann::json sent;
  for (int k = 0; k < parallel::TrafficCounter::kinds; ++k) {
    const auto kind = static_cast<parallel::TrafficCounter::Kind>(k);
    sent[parallel::TrafficCounter::name(kind)] =
        parallel::TrafficCounter::bytes(kind) - sent_at_start_[static_cast<size_t>(k)];
  }
  record["sent_bytes"] = sent;  // this rank's, over the run
  if (report.stop_signal != 0) record["stopped_by"] = signal_name(report.stop_signal);
  trainer.metrics().write(record);
}

}  // namespace tessera::train
