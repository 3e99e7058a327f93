#include "tessera/train/auto_layout.hpp"

#include <Kokkos_Core.hpp>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::train {

void describe_data(const nlohmann::json& config, plan::PlanRequest& request) {
  if (!config.contains("data") || !config["data"].is_object()) return;
  const nlohmann::json& data = config["data"];
  auto count = [&](const char* key, int64_t fallback) {
    const auto it = data.find(key);
    return it != data.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
  };
  const int64_t train = count("samples", 0), validation = count("validation_samples", 0);
  // Each data set has its own store of store_mb MiB (1024 by default).
  const double store = static_cast<double>(count("store_mb", 1024)) * 1024.0 * 1024.0;
  request.data_samples = train + validation;
  request.store_bytes = store * (validation > 0 ? 2 : 1);
  const auto prefetch = data.find("prefetch");
  // The trainer's batch and, prefetching, up to two more.
  request.batches_in_flight = prefetch != data.end() && prefetch->is_boolean() && !prefetch->get<bool>() ? 1 : 3;
}

namespace {

/// Rank 0's shares of the batch for everyone (its timings may have decided otherwise than
/// another rank's): its weights summed with zeros from the others.
void agree_on_balance(plan::Plan& plan, const parallel::Communicator& group) {
  std::vector<int64_t> weights(static_cast<size_t>(group.size()), 0);
  if (group.rank() == 0 && !plan.balance.empty()) weights = plan.balance;
  group.allreduce_sum(weights.data(), static_cast<int64_t>(weights.size()));
  if (weights.front() == 0)
    plan.balance.clear();
  else
    plan.balance = weights;
}

/// What plan_auto_layout asks the planner: every rank of `group` measures, rank 0 says what.
plan::PlanRequest auto_layout_request(const AutoLayoutOptions& options, const parallel::Communicator& group) {
  plan::PlanRequest request;
  request.ranks = group.size();
  request.batch = options.batch;
  request.backend = options.backend;
  request.threads = Kokkos::DefaultExecutionSpace().concurrency();
  request.optimizer_state = options.optimizer_state;
  request.measuring = group;
  request.precision = options.precision;
  request.gradient_precision = options.gradient_precision;
  request.allreduce_bucket_kb = options.allreduce_bucket_kb;
  describe_data(options.config, request);
  if (options.config.contains("optimizer")) request.optimizer = options.config["optimizer"];
  if (group.rank() == 0) request.on_measure = [](const std::string& what) { log::info("plan: measuring " + what); };
  return request;
}

/// Replaces every rank's chosen distributions with rank 0's: seven counts per layer (its six
/// splits and whether its weights are sharded), summed with zeros from the others. Returns
/// whether this rank had chosen the same.
bool adopt_rank0_layout(plan::Plan& plan, const parallel::Communicator& group) {
  constexpr size_t kFields = 7;
  const size_t n = plan.chosen.layers.size();
  std::vector<int64_t> counts(kFields * n, 0);
  if (group.rank() == 0)
    for (size_t i = 0; i < n; ++i) {
      const auto& d = plan.chosen.layers[i].distribution;
      const int64_t v[kFields] = {d.sample, d.channel, d.filter, d.depth, d.height, d.width, d.shard_weights ? 1 : 0};
      for (size_t k = 0; k < kFields; ++k) counts[kFields * i + k] = v[k];
    }
  group.allreduce_sum(counts.data(), static_cast<int64_t>(counts.size()));
  bool same = true;
  for (size_t i = 0; i < n; ++i) {
    auto& d = plan.chosen.layers[i].distribution;
    const int64_t* c = &counts[kFields * i];
    parallel::Distribution r;
    r.sample = static_cast<int>(c[0]);
    r.channel = static_cast<int>(c[1]);
    r.filter = static_cast<int>(c[2]);
    r.depth = static_cast<int>(c[3]);
    r.height = static_cast<int>(c[4]);
    r.width = static_cast<int>(c[5]);
    r.shard_weights = c[6] != 0;
    same = same && r == d;
    d = r;
  }
  return same;
}

}  // namespace

plan::Plan plan_auto_layout(model::ModelSpec& spec, const AutoLayoutOptions& options,
                            const parallel::Communicator& group) {
  plan::Plan plan;
  plan.batch = options.batch;
  if (group.size() == 1) {
    spec.distribution = parallel::Distribution{};
    for (auto& l : spec.layers) l.distribution = parallel::Distribution{};
    return plan;
  }
  if (options.machine_file.empty())
    throw ConfigError(spec.distribution_path,
                      "\"auto\" on " + std::to_string(group.size()) +
                          " ranks needs a machine profile: measure this machine once with `mpirun -np " +
                          std::to_string(group.size()) + " tessera calibrate --output machine.json` and pass " +
                          options.machine_key + " machine.json (or set TESSERA_MACHINE)");
  plan::MachineProfile profile = plan::read_machine_profile(options.machine_file);
  plan = plan::plan_model(spec, auto_layout_request(options, group), profile);
  if (!plan.chosen.valid) throw ConfigError(spec.distribution_path, "\"auto\": " + plan.chosen.why);
  if (!adopt_rank0_layout(plan, group)) log::info("plan: this rank's timings chose another layout; rank 0's is used");
  agree_on_balance(plan, group);
  plan::apply_layout(spec, plan.chosen);
  if (group.rank() == 0 && plan.measured > 0) plan::write_machine_profile(profile, options.machine_file);
  return plan;
}

}  // namespace tessera::train
